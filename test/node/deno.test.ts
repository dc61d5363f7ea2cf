/**
 * The same service on Deno from the same code (deno/main.ts): Deno KV as the cache and its
 * authoritative copy, an in-process single-flight and repeat-cap ledger, the same WASM codecs.
 * Driven over real HTTP against the loopback emulator.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG_PLACES, loadConfig } from "../../shared/config/config.load";
import { emulatorVars, freePort } from "../../scripts/local-stack";
import type { RunningEmulator } from "../emulator/server";
import {
  DENO_RUN,
  type DenoOnEmulator,
  denoFlightJoiners,
  type DenoService,
  startDeno,
  startDenoOnEmulator,
} from "../support/deno-service";
import { freshnessSuite } from "../support/freshness.suite";
import { answeredTogether, emulatorCalls, postJson, uniqueToken } from "../support/emulator-client";
import { searchFlightKey } from "../support/flight-keys";

let stack: DenoOnEmulator;
let emulator: RunningEmulator;
let url: string;

beforeAll(async () => {
  const configPath = join(mkdtempSync(join(tmpdir(), "deno-config-")), "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({ web: { cache_ttl_minutes: 45, char_limit: 3000 }, vision: { max_long_edge: 1200 } }),
  );
  stack = await startDenoOnEmulator(
    { CONFIG_PATH: configPath, WEB_CHAR_LIMIT: "500000", SECURITY_ALLOW_ANONYMOUS: "true" },
    { flightProbe: true },
  );
  emulator = stack.emulator;
  url = stack.deno.url;
}, 90_000);

afterAll(() => stack?.stop());

const post = (path: string, body: unknown) => postJson(`${url}${path}`, body);

const calls = (provider: string, contains: string) => emulatorCalls(emulator.url, provider, contains);

/** Callers of web_search `query` waiting in the Deno process's flight on the one paying. */
const searchJoiners = async (query: string) =>
  denoFlightJoiners(
    [stack.deno],
    await searchFlightKey(loadConfig(emulatorVars(emulator.url), CONFIG_PLACES.deno), query),
  );

describe("on Deno", () => {
  it("reads config.json section tables, with environment variables winning", async () => {
    const config = (await (await fetch(`${url}/v1/config`)).json()) as any;
    expect(config.web.cache_ttl_minutes).toBe(45);
    expect(config.web.char_limit).toBe(500_000);
    expect(config.vision.max_long_edge).toBe(1200);
    expect(config.secrets.TAVILY_API_KEY).toBe("set");
  });

  it("answers /healthz as deno", async () => {
    expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ ok: true, runtime: "deno" });
  });

  it("pays once for a repeated search and once for four concurrent ones", async () => {
    const token = `deno${Date.now().toString(36)}`;
    const first = await post("/v1/web_search", { query: `twice ${token}` });
    const second = await post("/v1/web_search", { query: `twice ${token}` });
    expect([first.headers.get("x-cache"), second.headers.get("x-cache")]).toEqual(["MISS", "HIT"]);
    expect(await calls("tavily", `twice ${token}`)).toBe(1);
    const query = `together [gate:g-${token}] ${token}`;
    const together = await answeredTogether(
      emulator.url,
      { gate: `g-${token}`, paying: 1, joiners: 3, count: () => searchJoiners(query) },
      [1, 2, 3, 4].map(() => post("/v1/web_search", { query })),
    );
    expect(together.map((r) => r.headers.get("x-cache")).sort()).toEqual([
      "COALESCED",
      "COALESCED",
      "COALESCED",
      "MISS",
    ]);
    expect(await calls("tavily", query)).toBe(1);
  });

  it("stores a long page in Deno KV across its 64 KiB value limit", async () => {
    const token = `denokv${Date.now().toString(36)}`;
    const page = `https://docs.example.com/[chars:300000]/${token}`;
    const first = (await (await post("/v1/web_extract", { urls: [page] })).json()) as any;
    const second = (await (await post("/v1/web_extract", { urls: [page] })).json()) as any;
    expect(first.results[0].content.length).toBeGreaterThan(300_000);
    expect(second.results[0].cached).toBe(true);
    expect(second.results[0].content).toBe(first.results[0].content);
    expect(await calls("tavily", token)).toBe(1);
  });

  it("fits an image and caps repeat embeds per session", async () => {
    const png = Buffer.from(
      await (await fetch(`${emulator.url}/pages/image.png?w=2400&h=1600`)).arrayBuffer(),
    ).toString("base64");
    const session = `s${Date.now()}`;
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await post("/v1/vision_analyze", { image: { data: png }, session_id: session, caller: "subagent" })).status,
      );
    expect(statuses).toEqual([200, 200, 200, 409]);
    const fitted = (await (
      await post("/v1/vision_analyze", { image: { data: png }, session_id: `${session}b` })
    ).json()) as any;
    expect([fitted.image.width, fitted.image.height]).toEqual([1200, 800]);
  });

  it("refuses a private address through the same gate", async () => {
    const response = await post("/v1/web_extract", { urls: ["http://169.254.169.254/latest/"] });
    expect(((await response.json()) as any).results[0].error.code).toBe("blocked_private_address");
  });
});

freshnessSuite("Deno", () => ({
  post: async (path, body, headers) => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  },
  providerCalls: calls,
  unique: () => uniqueToken("dn"),
  emulator: emulator.url,
  searchJoiners,
}));

describe("port contracts on Deno", () => {
  it("passes the CacheStore, EmbedCounter, SingleFlight and LedgerStore contracts with Deno KV, the Deno KV counters and leases and the in-process ledger and coordinator, the Deno KV flight's own tests, the pinned fetch's and the ledger store's commit limits", async () => {
    // Not spawnSync: the emulator the flight contract calls runs in this process's event loop.
    const result = await new Promise<{ status: number | null; output: string }>((resolve) => {
      execFile(
        "node_modules/.bin/deno",
        [
          "test",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          // The pinned fetch's tests name *.example.org sites that the emulator's DNS puts on loopback.
          "--allow-net=127.0.0.1,*.example.org",
          "test/deno/ports.contract.test.ts",
          "test/deno/flight.kv.test.ts",
          "test/deno/pinned-fetch.test.ts",
          "test/deno/ledger.kv.test.ts",
          "test/deno/embeds.kv.test.ts",
        ],
        {
          encoding: "utf8",
          env: {
            ...process.env,
            DENO_NO_UPDATE_CHECK: "1",
            NO_COLOR: "1",
            EMULATOR_URL: emulator.url,
            EMULATOR_DNS_PORT: String(emulator.dnsPort),
            DENO_CERT: "test/fixtures/tls/ca.pem",
          },
          timeout: 120_000,
          maxBuffer: 16 * 1024 * 1024,
        },
        (error, stdout, stderr) =>
          resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
      );
    });
    expect(result.output, result.output.slice(-2000)).toMatch(/ok \| 60 passed \| 0 failed/);
    expect(result.status).toBe(0);
  }, 150_000);
});

describe("the Deno entry type-checks", () => {
  it("deno check deno/main.ts", () => {
    const result = spawnSync("node_modules/.bin/deno", ["check", "deno/main.ts"], {
      encoding: "utf8",
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      timeout: 120_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`.slice(-2000)).toBe(0);
  });
});

describe("the Deno entry as the README runs it", () => {
  const env = () => ({ ...emulatorVars(emulator.url), SECURITY_ALLOW_ANONYMOUS: "true" });
  const search = (service: DenoService, query: string) =>
    fetch(`${service.url}/v1/web_search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });

  it("`npm run dev:deno -- --port N --hostname H` listens there, with Deno KV in a file that outlives the process", async () => {
    const port = await freePort();
    const kvPath = join(mkdtempSync(join(tmpdir(), "deno-kv-file-")), "cache.sqlite3");
    const command = ["npm", "run", "--silent", "dev:deno", "--", "--port", String(port), "--hostname", "127.0.0.1"];
    // PORT says otherwise: the flag wins.
    const first = await startDeno({ command, port, env: { ...env(), DENO_KV_PATH: kvPath, PORT: "1" } });
    const query = `kv file ${Date.now().toString(36)}`;
    try {
      expect(first.output()).toContain(`"url":"http://127.0.0.1:${port}"`);
      expect((await search(first, query)).headers.get("x-cache")).toBe("MISS");
    } finally {
      await first.stop();
    }
    const second = await startDeno({ command, port, env: { ...env(), DENO_KV_PATH: kvPath } });
    try {
      expect((await search(second, query)).headers.get("x-cache")).toBe("HIT");
      expect(await calls("tavily", query)).toBe(1);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it("writes the ledger's last counts before it stops on SIGTERM or Ctrl-C (SIGINT)", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const kvPath = join(mkdtempSync(join(tmpdir(), "deno-kv-ledger-")), "ledger.sqlite3");
      // The longest flush delay: without the flush on the signal, the count is still in memory.
      const first = await startDeno({ env: { ...env(), DENO_KV_PATH: kvPath, LEDGER_FLUSH_MS: "10000" } });
      try {
        expect((await search(first, `ledger on ${signal} ${Date.now().toString(36)}`)).status).toBe(200);
      } finally {
        await first.stop(signal);
      }
      const second = await startDeno({ env: { ...env(), DENO_KV_PATH: kvPath } });
      try {
        const stats = (await (await fetch(`${second.url}/v1/stats?window=24h`)).json()) as any;
        expect(stats.totals.web_search.requests, signal).toBe(1);
      } finally {
        await second.stop();
      }
    }
  }, 120_000);

  it("reads .dev.vars from the working directory as wrangler dev does; the environment wins over it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "deno-dev-vars-"));
    writeFileSync(
      join(dir, ".dev.vars"),
      '# local secrets\nWEB_CACHE_TTL_MINUTES=33\nWEB_CHAR_LIMIT="4321"\nSECURITY_ALLOW_ANONYMOUS=true\n',
    );
    writeFileSync(join(dir, "config.json"), JSON.stringify({ web: { cache_ttl_minutes: 10, char_limit: 1000 } }));
    const service = await startDeno({
      cwd: dir,
      env: { ...emulatorVars(emulator.url), DENO_KV_PATH: ":memory:", WEB_CHAR_LIMIT: "5555" },
    });
    try {
      const config = (await (await fetch(`${service.url}/v1/config`)).json()) as any;
      expect([config.web.cache_ttl_minutes, config.web.char_limit]).toEqual([33, 5555]);
    } finally {
      await service.stop();
    }
  }, 120_000);

  it("refuses an unknown flag with a message naming the flags it takes", async () => {
    const result = spawnSync("node_modules/.bin/deno", [...DENO_RUN, "deno/main.ts", "--prot", "9000"], {
      encoding: "utf8",
      env: { ...process.env, DENO_KV_PATH: ":memory:", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      timeout: 120_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("--port <n> and --hostname <address>");
  }, 120_000);

  it("refuses a DENO_FLIGHT_LEASE_MS past 10 minutes (a third of 1e10 ms overflows the renewal timer)", () => {
    const result = spawnSync("node_modules/.bin/deno", [...DENO_RUN, "deno/main.ts"], {
      encoding: "utf8",
      env: {
        ...process.env,
        DENO_KV_PATH: ":memory:",
        DENO_FLIGHT_LEASE_MS: "10000000000",
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
      },
      timeout: 120_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("DENO_FLIGHT_LEASE_MS must be a whole number of milliseconds from 10 to 600000");
  }, 120_000);

  it("refuses a DENO_DNS_SERVER that is not an IP address (with an optional port), naming the setting", () => {
    for (const value of ["dns.example.net:53", "10.0.0.2:99999", "[fe80::1%eth0]:53"]) {
      const result = spawnSync("node_modules/.bin/deno", [...DENO_RUN, "deno/main.ts"], {
        encoding: "utf8",
        env: {
          ...process.env,
          DENO_KV_PATH: ":memory:",
          DENO_DNS_SERVER: value,
          DENO_NO_UPDATE_CHECK: "1",
          NO_COLOR: "1",
        },
        timeout: 120_000,
      });
      expect(result.status, value).toBe(1);
      expect(result.stderr).toContain(`DENO_DNS_SERVER must be an IP address with an optional port`);
      expect(result.stderr).toContain(`(got ${value})`);
    }
  }, 180_000);

  it("keeps config.json and local KV files out of git", () => {
    const ignored = spawnSync("git", ["check-ignore", "config.json", "cache.sqlite3"], { encoding: "utf8" });
    expect(ignored.stdout.trim().split("\n")).toEqual(["config.json", "cache.sqlite3"]);
  });
});
