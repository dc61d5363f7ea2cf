/**
 * DenoKvFlight and DenoKvStore inside one Deno process (run by `deno test`, from
 * test/node/deno.test.ts, which starts the emulator and passes its URL as EMULATOR_URL): two handles
 * on one KV file behave as two processes. The provider is the emulated Tavily, whose call counts
 * are the evidence; Deno KV (not our code) is wrapped to count reads and commits. test/node/deno.scale.test.ts runs real processes.
 */
import { DenoKvStore } from "../../deno/cache.kv";
import { DenoKvFlight } from "../../deno/flight.kv";
import { silentLogger } from "../../shared/log";
import { paidCall, type PaidCallDeps, purgeCached } from "../../shared/web/cache";
import { CopyElection, FlightCoordinator } from "../../shared/web/flight";
import type { ExtractJob, SearchJob } from "../../shared/web/job.types";
import type { SingleFlight } from "../../shared/ports";
import {
  answeredTogether,
  closeGate,
  emulatorCalls,
  gateArrivals,
  openGate,
  uniqueToken,
  until,
} from "../support/emulator-client";

function assertEquals(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

const EMULATOR = Deno.env.get("EMULATOR_URL") ?? "";

/**
 * The emulated Tavily (test/emulator/server.ts) for one test: its queries and URLs carry the
 * markers that make it hold its answer at the gate `gate` until the test opens it (`[gate:ID]`,
 * with `gated`), fail with `failStatus` (`[fail:N]`) or give an empty page (`[empty]`), and a tag
 * its calls are counted by.
 */
function provider(options: { gated?: boolean; failStatus?: number; empty?: boolean } = {}) {
  const tag = uniqueToken("kv");
  const gate = `g-${tag}`;
  const markers = [
    ...(options.gated ? [`[gate:${gate}]`] : []),
    ...(options.failStatus ? [`[fail:${options.failStatus}]`] : []),
    ...(options.empty ? ["[empty]"] : []),
  ];
  return {
    gate,
    fetch: (input: Request | string | URL, init?: RequestInit) => fetch(input, init),
    query: (text: string) => `${text} ${markers.join(" ")} ${tag}`,
    url: (path: string) => `https://docs.example.com/${tag}/${markers.join("/")}/${path}`,
    calls: () => emulatorCalls(EMULATOR, "tavily", tag),
  };
}

/**
 * The answers of concurrent `callers` of `key`, given once `paying` of them are held at the
 * provider's gate and the flights count every other one as waiting on them (in this process's
 * flight or on another's lease): however slowly the callers arrive, none is late.
 */
function heldUntilJoined<T>(
  upstream: { gate: string },
  flights: SingleFlight[],
  key: string,
  paying: number,
  callers: Promise<T>[],
): Promise<T[]> {
  const count = async () => (await Promise.all(flights.map((f) => f.joiners(key)))).reduce((a, b) => a + b, 0);
  return answeredTogether(EMULATOR, { gate: upstream.gate, paying, joiners: callers.length - paying, count }, callers);
}

/** Deno KV with its reads (get, getMany) and atomic commits counted. */
function counted(kv: Deno.Kv) {
  const counts = { reads: 0, commits: 0 };
  const wrapped = new Proxy(kv, {
    get(target, name) {
      if (name === "get" || name === "getMany") {
        return (...args: unknown[]) => {
          counts.reads++;
          return (target[name] as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      if (name === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => {
            counts.commits++;
            return commit();
          };
          return op;
        };
      }
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: wrapped, counts };
}

const settings = {
  name: "tavily",
  baseUrl: `${EMULATOR}/tavily`,
  apiKey: "test-key-000000000000",
  timeoutMs: 5000,
};
const searchJob = (query: string): SearchJob => ({
  kind: "search",
  provider: "tavily",
  settings,
  request: { query, count: 10 },
});
const extractJob = (url: string): ExtractJob => ({
  kind: "extract",
  provider: "tavily",
  settings,
  request: { url, format: "markdown" },
  maxPageChars: 2_000_000,
  cacheExemptHosts: [],
});

const file = await Deno.makeTempFile({ suffix: ".sqlite3" });

/** One "process": its own handle on the shared file, its own store and flight. */
async function processOn(fetch: PaidCallDeps["fetch"], leaseMs = 2000) {
  const { kv, counts } = counted(await Deno.openKv(file));
  const cache = new DenoKvStore(kv);
  const flight = new DenoKvFlight(
    kv,
    cache,
    { fetch, log: silentLogger, clock: Date.now },
    { leaseMs, pollMs: { first: 10, max: 50 } },
  );
  const deps: PaidCallDeps = { cache, flight, fetch, clock: Date.now, log: silentLogger };
  return { deps, counts, cache, flight };
}

const options = { enabled: true, ttlMs: 60_000, store: true };
const unique = () => crypto.randomUUID();

Deno.test({
  name: "Deno KV flight: a miss reads Deno KV once; a repeat in the same process reads nothing; another process's first hit reads once",
  sanitizeResources: false,
  async fn() {
    const upstream = provider();
    const a = await processOn(upstream.fetch);
    const b = await processOn(upstream.fetch);
    const key = `search:${unique()}`;
    assertEquals((await paidCall(a.deps, key, searchJob(upstream.query("once")), options)).cache, "miss", "first call");
    assertEquals(
      a.counts,
      { reads: 1, commits: 2 },
      "Deno KV calls of a miss (read the head; take the lease; commit entry + release)",
    );
    assertEquals((await paidCall(a.deps, key, searchJob(upstream.query("once")), options)).cache, "hit", "repeat");
    assertEquals(a.counts.reads, 1, "reads after a repeat in the same process");
    assertEquals(
      (await paidCall(b.deps, key, searchJob(upstream.query("once")), options)).cache,
      "hit",
      "the other process",
    );
    assertEquals(b.counts, { reads: 1, commits: 0 }, "Deno KV calls of the other process's hit");
    assertEquals(await upstream.calls(), 1, "provider calls");
  },
});

Deno.test({
  name: "Deno KV flight: 20 concurrent callers over two processes pay once and get the same answer",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true });
    const procs = [await processOn(upstream.fetch), await processOn(upstream.fetch)];
    const key = `search:${unique()}`;
    const answers = await heldUntilJoined(
      upstream,
      procs.map((p) => p.flight),
      key,
      1,
      Array.from({ length: 20 }, (_, i) =>
        paidCall(procs[i % 2]!.deps, key, searchJob(upstream.query("together")), options),
      ),
    );
    assertEquals(await upstream.calls(), 1, "provider calls");
    assertEquals(new Set(answers.map((a) => JSON.stringify(a.value))).size, 1, "distinct answers");
    assertEquals(answers.filter((a) => a.cache === "miss").length, 1, "leaders");
  },
});

Deno.test({
  name: "Deno KV flight: a failure reaches every waiter and stores nothing; the next caller pays again",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true, failStatus: 503 });
    const procs = [await processOn(upstream.fetch), await processOn(upstream.fetch)];
    const key = `search:${unique()}`;
    const settled = await heldUntilJoined(
      upstream,
      procs.map((p) => p.flight),
      key,
      1,
      Array.from({ length: 10 }, (_, i) =>
        paidCall(procs[i % 2]!.deps, key, searchJob(upstream.query("down")), options).then(
          () => "answered",
          (error: { code?: string }) => error.code,
        ),
      ),
    );
    assertEquals(settled, Array(10).fill("provider_error"), "every caller's outcome");
    assertEquals(await upstream.calls(), 1, "provider calls for the concurrent callers");
    assertEquals(await procs[1]!.cache.get(key), null, "stored entry");
    await paidCall(procs[1]!.deps, key, searchJob(upstream.query("down")), options).catch(() => undefined);
    assertEquals(await upstream.calls(), 2, "provider calls after the next caller");
  },
});

Deno.test({
  name: "Deno KV flight: an answer that must not be stored (an empty page) is handed to the other process's waiters, never stored",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true, empty: true });
    const procs = [await processOn(upstream.fetch), await processOn(upstream.fetch)];
    const key = `extract:${unique()}`;
    const answers = await heldUntilJoined(
      upstream,
      procs.map((p) => p.flight),
      key,
      1,
      Array.from({ length: 10 }, (_, i) =>
        paidCall(procs[i % 2]!.deps, key, extractJob(upstream.url("empty")), options),
      ),
    );
    assertEquals(await upstream.calls(), 1, "provider calls");
    assertEquals(
      answers.map((a) => ("page" in a.value ? a.value.page.content : null)),
      Array(10).fill(""),
      "every caller's page",
    );
    assertEquals(await procs[0]!.cache.get(key), null, "stored entry");
  },
});

Deno.test({
  name: "Deno KV flight: a lease its holder stopped renewing holds the key until it expires, then the next caller pays once",
  sanitizeResources: false,
  async fn() {
    const upstream = provider();
    const proc = await processOn(upstream.fetch);
    const key = `search:${unique()}`;
    // What a process killed mid-call leaves behind: its lease, no entry.
    const kv = await Deno.openKv(file);
    await kv.set(["flight-lease", key], { id: "crashed", expiresAt: Date.now() + 400 });
    const started = Date.now();
    const answer = await paidCall(proc.deps, key, searchJob(upstream.query("after a crash")), options);
    const waited = Date.now() - started;
    assertEquals([answer.cache, await upstream.calls()], ["miss", 1], "outcome and provider calls");
    if (waited < 350) throw new Error(`paid after ${waited} ms, before the crashed leader's lease expired`);
    kv.close();
  },
});

Deno.test({
  name: "Deno KV flight with watch: a waiter wakes on the leader's commit, long before its poll would",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true });
    // One handle, two flights: `watch` on a local file sees only its own handle's writes. The poll
    // is 10 minutes: only the watch can wake the waiter within the test's 30 s.
    const kv = await Deno.openKv(":memory:");
    const slowPoll = { leaseMs: 5000, pollMs: { first: 600_000, max: 600_000 }, watch: true };
    const [a, b] = [0, 1].map(() => {
      const cache = new DenoKvStore(kv);
      const flight = new DenoKvFlight(
        kv,
        cache,
        { fetch: upstream.fetch, log: silentLogger, clock: Date.now },
        slowPoll,
      );
      return { cache, flight, fetch: upstream.fetch, clock: Date.now, log: silentLogger } satisfies PaidCallDeps;
    });
    const key = `search:${unique()}`;
    // a pays (its call held at the gate); b waits on a's lease; the gate opens once b is counted.
    const first = paidCall(a!, key, searchJob(upstream.query("watched")), options);
    await until(
      async () => (await gateArrivals(EMULATOR, upstream.gate)) === 1,
      () => "the leader's call never reached the provider",
    );
    const second = paidCall(b!, key, searchJob(upstream.query("watched")), options);
    await until(
      async () => (await b!.flight.joiners(key)) === 1,
      () => "the second flight never waited on the lease",
    );
    await openGate(EMULATOR, upstream.gate);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const slept = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("the waiter slept through the change (no wake within 30 s)")), 30_000);
    });
    const answers = await Promise.race([Promise.all([first, second]), slept]).finally(() => clearTimeout(timer));
    assertEquals(
      [answers[0].cache, answers[1].cache, await upstream.calls()],
      ["miss", "coalesced", 1],
      "outcomes and provider calls",
    );
    kv.close();
  },
});

Deno.test({
  name: "single-process mode: the in-process coordinator over the store's process copy reads Deno KV once per miss and pays once",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true });
    const { kv, counts } = counted(await Deno.openKv(":memory:"));
    const cache = new DenoKvStore(kv);
    const flight = new FlightCoordinator({
      election: new CopyElection(cache.processCopy()),
      fetch: upstream.fetch,
      log: silentLogger,
    });
    const deps: PaidCallDeps = { cache, flight, fetch: upstream.fetch, clock: Date.now, log: silentLogger };
    const key = `search:${unique()}`;
    const answers = await heldUntilJoined(
      upstream,
      [flight],
      key,
      1,
      Array.from({ length: 8 }, () => paidCall(deps, key, searchJob(upstream.query("one process")), options)),
    );
    assertEquals(
      answers.map((a) => a.cache).sort(),
      ["coalesced", "coalesced", "coalesced", "coalesced", "coalesced", "coalesced", "coalesced", "miss"],
      "outcomes",
    );
    assertEquals(
      [counts.reads, await upstream.calls()],
      [8, 1],
      "Deno KV reads (one per caller's miss) and provider calls",
    );
    assertEquals(
      (await paidCall(deps, key, searchJob(upstream.query("one process")), options)).cache,
      "hit",
      "a later caller",
    );
    assertEquals(counts.reads, 8, "Deno KV reads after the later hit");
    kv.close();
  },
});

Deno.test({
  name: "Deno KV flight: 8 concurrent max_age 0 callers over two processes pay once, and their answer replaces the stored one",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true });
    const procs = [await processOn(upstream.fetch), await processOn(upstream.fetch)];
    const key = `search:${unique()}`;
    const first = await heldUntilJoined(upstream, [procs[0]!.flight], key, 1, [
      paidCall(procs[0]!.deps, key, searchJob(upstream.query("fresh")), options),
    ]).then(([answer]) => answer!);
    await closeGate(EMULATOR, upstream.gate); // held again for the max_age 0 callers
    const fresh = await heldUntilJoined(
      upstream,
      procs.map((p) => p.flight),
      key,
      1,
      Array.from({ length: 8 }, (_, i) =>
        paidCall(procs[i % 2]!.deps, key, searchJob(upstream.query("fresh")), { ...options, maxAge: 0 }),
      ),
    );
    assertEquals(await upstream.calls(), 2, "provider calls");
    assertEquals(fresh.filter((a) => a.cache === "miss").length, 1, "leaders among the max_age 0 callers");
    assertEquals(new Set(fresh.map((a) => a.cachedAt)).size, 1, "one fetch time for all of them");
    const later = await paidCall(procs[1]!.deps, key, searchJob(upstream.query("fresh")), options);
    assertEquals([later.cache, later.cachedAt], ["hit", fresh[0]!.cachedAt], "a later caller in the other process");
    if (!(later.cachedAt > first.cachedAt)) throw new Error("the stored entry is not the fresh one");
  },
});

Deno.test({
  name: "Deno KV flight: store:false calls over two processes merge with each other and store nothing",
  sanitizeResources: false,
  async fn() {
    const upstream = provider({ gated: true });
    const procs = [await processOn(upstream.fetch), await processOn(upstream.fetch)];
    const key = `search:${unique()}`;
    const answers = await heldUntilJoined(
      upstream,
      procs.map((p) => p.flight),
      key,
      1,
      Array.from({ length: 4 }, (_, i) =>
        paidCall(procs[i % 2]!.deps, key, searchJob(upstream.query("unstored")), { ...options, store: false }),
      ),
    );
    assertEquals(
      [await upstream.calls(), answers.filter((a) => a.cache === "miss").length],
      [1, 1],
      "provider calls and leaders",
    );
    assertEquals(await procs[0]!.cache.get(key), null, "stored entry");
  },
});

Deno.test({
  name: "Deno KV flight: a purge from another process while the leader pays does not stop it; its answer is stored",
  sanitizeResources: false,
  async fn() {
    const upstream = provider();
    const procs = [await processOn(upstream.fetch), await processOn(upstream.fetch)];
    const key = `search:${unique()}`;
    await paidCall(procs[0]!.deps, key, searchJob(upstream.query("purged")), options);
    assertEquals(await purgeCached(procs[1]!.deps, key), true, "purge of the stored entry");
    // The leader is the purging process (the other one's memory copy outlives a purge: docs/storage.md).
    // The provider holds its answer until the gate opens: the leader pays once its call has arrived.
    const gate = uniqueToken("purge");
    const inFlight = paidCall(procs[1]!.deps, key, searchJob(upstream.query(`purged [gate:${gate}]`)), options);
    await until(
      async () => (await gateArrivals(EMULATOR, gate)) === 1,
      () => "the leader's call never reached the provider",
    );
    assertEquals(await purgeCached(procs[0]!.deps, key), false, "purge while the leader pays");
    await openGate(EMULATOR, gate);
    assertEquals((await inFlight).cache, "miss", "the leader's answer");
    assertEquals(
      (await paidCall(procs[0]!.deps, key, searchJob(upstream.query("purged")), options)).cache,
      "hit",
      "the other process after it",
    );
    assertEquals(await upstream.calls(), 2, "provider calls");
  },
});
