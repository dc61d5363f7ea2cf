/**
 * The JavaScript of a web_search cache hit on Deno, without the HTTP server: each checkout's app
 * (shared/app/app.ts, with Deno's cache, ledger and logger as deno/main.ts builds them, one
 * process's memory) answers `app.fetch` hits in this one process, the checkouts taking turns block
 * by block; prints the least and the median CPU µs a hit per checkout (this process's CPU time, so other
 * processes on the machine move it less than a clock would). The log lines go nowhere (the
 * logger gathers and drops them). In-process figures: the server's own work is not in them.
 * Run: DIRS=<dir>,<dir> node_modules/.bin/deno run -A bench/deno-inprocess/web-hit.ts   (BLOCK=2000, BLOCKS=15)
 */
import { cpuUsage } from "node:process";
import { startEmulator, emulatorVars } from "../../test/emulator/server";

/** CPU µs this process has used so far (every thread). */
const cpuNow = () => {
  const { user, system } = cpuUsage();
  return user + system;
};

const BLOCK = Number(Deno.env.get("BLOCK") ?? 2000);
const BLOCKS = Number(Deno.env.get("BLOCKS") ?? 15);
const DIRS = (Deno.env.get("DIRS") ?? ".").split(",");

const emulator = await startEmulator();
const vars = { ...emulatorVars(emulator.url), SECURITY_ALLOW_ANONYMOUS: "true", WEB_CACHE_TTL_MINUTES: "60" };

async function appOf(dir: string): Promise<(request: Request) => Promise<Response>> {
  const root = new URL(`${dir.startsWith("/") ? "file://" : `file://${Deno.cwd()}/`}${dir}/`);
  const at = (path: string) => import(new URL(path, root).href);
  const { createApp } = await at("shared/app/app.ts");
  const { CONFIG_PLACES, loadConfig } = await at("shared/config/config.load.ts");
  const { afterResponseLogger, silentLogger } = await at("shared/log.ts");
  const { DenoKvStore } = await at("deno/cache.kv.ts");
  const { CopyElection, FlightCoordinator } = await at("shared/web/flight.ts");
  const { MemoryEmbedCounter } = await at("deno/embeds.memory.ts");
  const { DenoKvLedgerStore } = await at("deno/ledger.kv.ts");
  const { LedgerBuffer } = await at("shared/stats/ledger.ts");
  const { dnsResolverPool } = await at("shared/safety/dns.ts");
  const kv = await Deno.openKv(":memory:");
  const cache = new DenoKvStore(kv, Date.now, false);
  const fetchPort = (input: Request | string | URL, init?: RequestInit) => fetch(input, init);
  const flight = new FlightCoordinator({
    election: new CopyElection(cache.processCopy()),
    fetch: fetchPort,
    untrustedFetch: fetchPort,
    log: silentLogger,
  });
  const ledgerStore = new DenoKvLedgerStore(kv);
  const ledger = new LedgerBuffer(ledgerStore, silentLogger);
  const loaded = loadConfig(vars, CONFIG_PLACES.deno);
  const log = afterResponseLogger(() => {});
  const app = createApp({
    runtime: "deno",
    version: "0.0.0",
    config: () => loaded,
    cache,
    flight: {
      run: (k: string, j: unknown, o: unknown) => flight.run(k, j, o),
      forget: async () => false,
      joiners: (k: string) => flight.joiners(k),
    },
    fetch: fetchPort,
    untrustedFetch: fetchPort,
    clock: Date.now,
    log,
    fitImage: () => Promise.reject(new Error("no fits here")),
    embeds: new MemoryEmbedCounter(Date.now),
    dnsResolver: dnsResolverPool(fetchPort, Date.now, silentLogger),
    ledger,
    ledgerStore,
  });
  // As deno/main.ts: the lines are written after the response, the ledger flushed after it.
  return async (request) => {
    const done = Promise.withResolvers<void>();
    log.after(done.promise);
    const response = await app.fetch(request);
    void ledger.flushAfter(1000);
    await response.arrayBuffer();
    done.resolve();
    return response;
  };
}

const request = () =>
  new Request("http://127.0.0.1:8787/v1/web_search", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": "29" },
    body: '{"query":"in process hit 1"}',
  });
const apps = [];
for (const dir of DIRS) apps.push(await appOf(dir));
for (const app of apps) {
  const first = await app(request());
  if (first.status !== 200) throw new Error(`status ${first.status}: ${await first.text()}`);
  for (let i = 0; i < 3000; i++) await app(request());
}
const results = apps.map(() => [] as number[]);
for (let b = 0; b < BLOCKS; b++)
  for (let k = 0; k < apps.length; k++) {
    const i = (b + k) % apps.length;
    const start = cpuNow();
    for (let n = 0; n < BLOCK; n++) {
      const response = await apps[i]!(request());
      if (n === 0 && response.headers.get("x-cache") !== "HIT") throw new Error("not a hit");
    }
    results[i]!.push((cpuNow() - start) / BLOCK);
  }
// The same loop answering a kept Response: the harness's own share (the Request, the body read).
const floor: number[] = [];
for (let b = 0; b < BLOCKS; b++) {
  const start = cpuNow();
  for (let n = 0; n < BLOCK; n++) {
    const r = request();
    await r.arrayBuffer();
    await new Response("{}", { headers: { "content-type": "application/json" } }).arrayBuffer();
  }
  floor.push((cpuNow() - start) / BLOCK);
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
console.log("| checkout | least CPU µs / hit | median CPU µs / hit |\n|---|---|---|");
DIRS.forEach((dir, i) => {
  const s = sorted(results[i]!);
  console.log(`| ${dir} | ${s[0]!.toFixed(1)} | ${s[Math.floor(s.length / 2)]!.toFixed(1)} |`);
});
const f = sorted(floor);
console.log(
  `| (the harness: a Request read, a Response read) | ${f[0]!.toFixed(1)} | ${f[Math.floor(f.length / 2)]!.toFixed(1)} |`,
);
await emulator.close();
Deno.exit(0);
