/**
 * Deno at scale (deno/flight.kv.ts, deno/embeds.kv.ts): four Deno processes sharing one Deno KV
 * file pay a provider once per key and hold the repeat cap across processes; the same suite runs
 * against one process on `:memory:` (the explicit single-process mode). Real processes over real
 * HTTP, against the loopback emulator.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars } from "../../scripts/local-stack";
import { CONFIG_PLACES, loadConfig } from "../../shared/config/config.load";
import { startEmulator } from "../emulator/server";
import { type DenoService, denoFlightJoiners, startDeno } from "../support/deno-service";
import { answeredTogether, emulatorCalls, gateArrivals, openGate, postJson, until } from "../support/emulator-client";
import { extractFlightKey, searchFlightKey } from "../support/flight-keys";

const LEASE_MS = 1500;

let emulator: Awaited<ReturnType<typeof startEmulator>>;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator?.close();
});

const calls = (provider: string, contains: string) => emulatorCalls(emulator.url, provider, contains);

const post = (service: DenoService, path: string, body: unknown) => postJson(`${service.url}${path}`, body);

/** Counts of each value, e.g. {MISS: 1, COALESCED: 63}. */
const tally = (values: (string | number | null)[]) =>
  values.reduce<Record<string, number>>((counts, v) => ({ ...counts, [String(v)]: (counts[String(v)] ?? 0) + 1 }), {});

const MODES = [
  {
    name: "4 Deno processes on one Deno KV file",
    processes: 4,
    kvPath: () => join(mkdtempSync(join(tmpdir(), "deno-kv-")), "cache.sqlite3"),
  },
  { name: "one Deno process on :memory: (single-process mode)", processes: 1, kvPath: () => ":memory:" },
];

describe.each(MODES)("$name", ({ processes, kvPath }) => {
  let services: DenoService[] = [];
  let path = "";
  const spread = <T>(n: number, request: (service: DenoService) => Promise<T>) =>
    Promise.all(Array.from({ length: n }, (_, i) => request(services[i % services.length]!)));
  /**
   * `n` concurrent requests spread over the processes, answered once one call is held at the
   * provider's `[gate:ID]` and the other n - 1 callers wait on it (in a process's flight or on the
   * Deno KV lease), however slowly they arrive.
   */
  const together = <T>(gate: string, key: () => Promise<string>, n: number, request: (s: DenoService) => Promise<T>) =>
    answeredTogether(
      emulator.url,
      { gate, paying: 1, joiners: n - 1, count: async () => denoFlightJoiners(services, await key()) },
      Array.from({ length: n }, (_, i) => request(services[i % services.length]!)),
    );
  const config = () => loadConfig(emulatorVars(emulator.url), CONFIG_PLACES.deno);

  beforeAll(async () => {
    path = kvPath();
    const env = {
      ...emulatorVars(emulator.url),
      DENO_KV_PATH: path,
      DENO_FLIGHT_LEASE_MS: String(LEASE_MS),
      SECURITY_ALLOW_ANONYMOUS: "true",
      WEB_CHAR_LIMIT: "500000",
    };
    services = await Promise.all(Array.from({ length: processes }, () => startDeno({ env, flightProbe: true })));
    const listening = services.map(
      (s) =>
        JSON.parse(
          s
            .output()
            .split("\n")
            .find((line) => line.includes('"listening"'))!,
        ).coordination,
    );
    expect(listening).toEqual(Array(processes).fill(processes > 1 ? "deno-kv" : "in-process"));
  }, 120_000);

  afterAll(async () => {
    if (process.env.DEBUG_DENO) for (const s of services) console.log(s.output());
    await Promise.all(services.map((s) => s.stop()));
    if (path !== ":memory:") rmSync(dirname(path), { recursive: true, force: true });
  });

  it("64 identical concurrent searches make 1 provider call, and every caller gets its answer", async () => {
    const gate = `fan-${Date.now().toString(36)}${processes}`;
    const query = `fan in [gate:${gate}] ${gate}`;
    const responses = await together(
      gate,
      () => searchFlightKey(config(), query),
      64,
      (s) => post(s, "/v1/web_search", { query }),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as { results: unknown[] }[];
    expect(tally(responses.map((r) => r.status))).toEqual({ 200: 64 });
    expect(new Set(bodies.map((b) => JSON.stringify(b.results))).size).toBe(1);
    expect(tally(responses.map((r) => r.headers.get("x-cache")))).toEqual({ MISS: 1, COALESCED: 63 });
    expect(await calls("tavily", query)).toBe(1);
    // Later callers, in every process, read the stored entry.
    const later = await spread(processes, (s) => post(s, "/v1/web_search", { query }));
    expect(later.map((r) => r.headers.get("x-cache"))).toEqual(Array(processes).fill("HIT"));
    expect(await calls("tavily", query)).toBe(1);
  }, 60_000);

  it("a purge through one process reaches every process's memory copy within a second", async () => {
    const query = `purged everywhere ${Date.now().toString(36)}${processes}`;
    expect((await post(services[0]!, "/v1/web_search", { query })).headers.get("x-cache")).toBe("MISS");
    // Every process reads the entry twice: the second answer comes from its memory copy.
    for (let round = 0; round < 2; round++) {
      const hits = await spread(processes, (s) => post(s, "/v1/web_search", { query }));
      expect(hits.map((r) => r.headers.get("x-cache"))).toEqual(Array(processes).fill("HIT"));
    }
    const purge = await post(services[0]!, "/v1/cache/purge", { search: [{ query }] });
    expect(await purge.json()).toEqual({ success: true, purged: 1 });
    // A process answering from memory reads the purge count once a second by its clock
    // (docs/storage.md): past that second its next read checks, however loaded the machine.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const last = services[services.length - 1]!;
    expect((await post(last, "/v1/web_search", { query })).headers.get("x-cache")).toBe("MISS");
    expect(await calls("tavily", query)).toBe(2);
    const after = await spread(processes, (s) => post(s, "/v1/web_search", { query }));
    expect(after.map((r) => r.headers.get("x-cache"))).toEqual(Array(processes).fill("HIT"));
    expect(await calls("tavily", query)).toBe(2);
  }, 60_000);

  it("a long page crosses processes intact through the chunked entry", async () => {
    const gate = `page-${Date.now().toString(36)}${processes}`;
    const page = `https://docs.example.com/[chars:300000]/[gate:${gate}]/${gate}`;
    const responses = await together(
      gate,
      () => extractFlightKey(config(), page),
      8,
      (s) => post(s, "/v1/web_extract", { urls: [page] }),
    );
    const contents = await Promise.all(
      responses.map(async (r) => ((await r.json()) as any).results[0].content as string),
    );
    expect(contents[0]!.length).toBeGreaterThanOrEqual(300_000); // `[chars:N]`: at least N
    expect(new Set(contents).size).toBe(1);
    expect(await calls("tavily", page)).toBe(1);
  }, 60_000);

  it("a failed provider call stores nothing: its waiters share the failure, the next caller pays again", async () => {
    const gate = `fails-${Date.now().toString(36)}${processes}`;
    const query = `fan in fails [fail:503] [gate:${gate}] ${gate}`;
    const responses = await together(
      gate,
      () => searchFlightKey(config(), query),
      16,
      (s) => post(s, "/v1/web_search", { query }),
    );
    expect(responses.every((r) => r.status < 500 || r.status === 502 || r.status === 503)).toBe(true);
    expect(await calls("tavily", query)).toBe(1);
    await post(services[services.length - 1]!, "/v1/web_search", { query });
    expect(await calls("tavily", query)).toBe(2);
  }, 60_000);

  it("64 concurrent subagent loads of one image in one session embed exactly 3 times", async () => {
    const png = Buffer.from(await (await fetch(`${emulator.url}/pages/image.png?w=320&h=200`)).arrayBuffer()).toString(
      "base64",
    );
    const session = `scale-${Date.now().toString(36)}-${processes}`;
    const responses = await spread(64, (s) =>
      post(s, "/v1/vision_analyze", { image: { data: png }, session_id: session, caller: "subagent" }),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as any[];
    expect(tally(responses.map((r) => r.status))).toEqual({ 200: 3, 409: 61 });
    expect(
      bodies
        .filter((b) => b.embed_count)
        .map((b) => b.embed_count)
        .sort(),
    ).toEqual([1, 2, 3]);
    expect(bodies.find((b) => b.error)?.error.code).toBe("embed_cap_reached");
    // Another session starts from zero.
    expect(
      (
        await post(services[0]!, "/v1/vision_analyze", {
          image: { data: png },
          session_id: `${session}-other`,
          caller: "subagent",
        })
      ).status,
    ).toBe(200);
  }, 120_000);

  // Only where several processes share the KV: one process on :memory: takes its store with it.
  if (processes > 1)
    it("a leader killed mid-call leaves no entry; the next caller pays once, after the lease expires", async () => {
      const gate = `killed-${Date.now().toString(36)}`;
      const query = `killed leader [gate:${gate}] ${gate}`;
      const [leader, ...others] = services;
      // The provider holds the leader's call at the gate: it is killed mid-call, its lease taken.
      void post(leader!, "/v1/web_search", { query }).catch(() => undefined);
      await until(
        async () => (await gateArrivals(emulator.url, gate)) === 1,
        () => "the leader never called the provider",
      );
      const killedAt = Date.now();
      await leader!.stop("SIGKILL");
      await openGate(emulator.url, gate);
      const after = await Promise.all(others.map((s) => post(s, "/v1/web_search", { query })));
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS / 2); // they waited for the lease
      expect(after.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(tally(after.map((r) => r.headers.get("x-cache")))).toMatchObject({ MISS: 1 });
      expect(await calls("tavily", query)).toBe(2);
      expect((await post(others[0]!, "/v1/web_search", { query })).headers.get("x-cache")).toBe("HIT");
      expect(await calls("tavily", query)).toBe(2);
    }, 60_000);
});
