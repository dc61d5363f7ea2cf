/**
 * The Deno entry: the same app as on Workers, built from Deno's ports. Deno KV is the cache and
 * the authoritative copy, and it coordinates single-flight and the repeat cap across every process
 * that shares it; an explicit single-process mode (`DENO_KV_PATH=:memory:`, or
 * `DENO_SINGLE_PROCESS=true`) keeps both in process memory instead. Configuration: an optional
 * config.json (section tables, as in wrangler.toml), then `.dev.vars` (as wrangler dev reads it),
 * then the environment, which wins.
 *
 *   deno run --allow-net --allow-read --allow-write --allow-env deno/main.ts --port 8787 --hostname 127.0.0.1
 *   PORT=8787 HOSTNAME=127.0.0.1 CONFIG_PATH=./config.json DENO_KV_PATH=./cache.sqlite3
 *   DENO_SINGLE_PROCESS=true DENO_FLIGHT_LEASE_MS=10000 DENO_FLIGHT_WATCH=true
 *   DENO_DNS_SERVER=10.0.0.2:53 (the resolver a caller's URL is checked and connected by; default the system's)
 */
import { parseArgs, parseEnv } from "node:util";
import { createApp } from "../shared/app/app";
import { CONFIG_PLACES, loadConfig, type LoadedConfig } from "../shared/config/config.load";
import { afterResponseLogger, consoleLogger } from "../shared/log";
import { dnsResolverPool } from "../shared/safety/dns";
import { createImageFitter } from "../shared/imaging/fit";
import { CopyElection, FlightCoordinator } from "../shared/web/flight";
import type { EmbedCounter, SingleFlight } from "../shared/ports";
import { DenoKvStore } from "./cache.kv";
import { MemoryEmbedCounter } from "./embeds.memory";
import { DenoKvEmbedCounter } from "./embeds.kv";
import { DenoKvLedgerStore } from "./ledger.kv";
import { LedgerBuffer, ledgerFlushDelay } from "../shared/stats/ledger";
import { DEFAULT_FLIGHT_TIMING, DenoKvFlight } from "./flight.kv";
import { loadVisionWasm } from "./vision-codecs";
import { pinnedFetch } from "./pinned-fetch";
import { classifyIpLiteral } from "../shared/safety/ip";

const encoder = new TextEncoder();

/**
 * A log text to stdout (`log`) or stderr, the bytes `console.log(text)` writes without console's
 * formatting pass over them. A stream that is closed takes nothing, and the service goes on.
 */
function writeText(method: "log" | "warn" | "error", text: string): void {
  const out = method === "log" ? Deno.stdout : Deno.stderr;
  const bytes = encoder.encode(`${text}\n`);
  try {
    for (let at = 0; at < bytes.byteLength; ) at += out.writeSync(bytes.subarray(at));
  } catch {
    // Nowhere to write the line (the reading end of a pipe has gone).
  }
}

function fail(message: string): never {
  console.error(JSON.stringify({ level: "error", event: "deno_start_failed", message }));
  Deno.exit(1);
}

/** `DENO_DNS_SERVER`: `address` or `address:port` (IPv6 as `[address]:port`); port 53 when left out. */
function parseNameServer(value: string | undefined): { ipAddr: string; port: number } | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const text = value.trim();
  // [v6]:port, v4:port, or a bare address (an IPv6 address without brackets takes no port).
  const [, ipAddr = text, portText] =
    /^\[([^\]]*)\](?::(\d{1,5}))?$/.exec(text) ?? /^([^:]*):(\d{1,5})$/.exec(text) ?? [];
  const port = portText === undefined ? 53 : Number(portText);
  if (classifyIpLiteral(ipAddr) === null || port < 1 || port > 65535)
    fail(
      `DENO_DNS_SERVER must be an IP address with an optional port, like 10.0.0.2:53 or [fd00::53]:53 (got ${value})`,
    );
  return { ipAddr, port };
}

let flags: { port?: string; hostname?: string };
try {
  flags = parseArgs({
    args: Deno.args,
    options: { port: { type: "string" }, hostname: { type: "string" } },
    strict: true,
  }).values;
} catch (error) {
  fail(`${error instanceof Error ? error.message : error}; the flags are --port <n> and --hostname <address>`);
}

/** `.dev.vars` in the working directory, read as wrangler dev reads it (dotenv syntax). */
async function readDevVars(): Promise<Record<string, string>> {
  try {
    return parseEnv(await Deno.readTextFile(".dev.vars")) as Record<string, string>;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return {};
    fail(`cannot read .dev.vars: ${error instanceof Error ? error.message : error}`);
  }
}

const env = { ...(await readDevVars()), ...Deno.env.toObject() };

async function readConfigTables(): Promise<Record<string, unknown>> {
  const path = env.CONFIG_PATH ?? "config.json";
  let tables: unknown;
  try {
    tables = JSON.parse(await Deno.readTextFile(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && env.CONFIG_PATH === undefined) return {};
    fail(`cannot read the configuration file ${path}: ${error instanceof Error ? error.message : error}`);
  }
  if (tables === null || typeof tables !== "object" || Array.isArray(tables))
    fail(
      `the configuration file ${path} must be a JSON object of sections, such as {"web": {"cache_ttl_minutes": 60}}`,
    );
  return tables as Record<string, unknown>;
}

const tables = await readConfigTables();
let loaded: LoadedConfig | Error;
try {
  loaded = loadConfig({ ...tables, ...env }, CONFIG_PLACES.deno);
} catch (error) {
  // Said now, and answered on every request (a 503 from /healthz, a 500 config_error elsewhere), as on Workers.
  loaded = error as Error;
  console.error(JSON.stringify({ level: "error", event: "config_error", message: loaded.message }));
}
const pkg = JSON.parse(await Deno.readTextFile(new URL("../package.json", import.meta.url))) as { version: string };
let kv: Deno.Kv;
try {
  kv = await Deno.openKv(env.DENO_KV_PATH);
} catch (error) {
  fail(
    `cannot open Deno KV at ${env.DENO_KV_PATH ?? "the default location"}: ${error instanceof Error ? error.message : error} (a KV file needs --allow-read and --allow-write)`,
  );
}
const singleProcess = env.DENO_KV_PATH === ":memory:" || env.DENO_SINGLE_PROCESS === "true";
const cache = new DenoKvStore(kv, Date.now, !singleProcess);
const fetchPort = (input: Request | string | URL, init?: RequestInit) => fetch(input, init);
// A caller's URL is connected only to an address checked at connect time (deno/pinned-fetch.ts).
// Deno Deploy gives no local listener or per-fetch client for it, and its fetch leaves from the
// platform's network, as a Worker's does (docs/security.md, "time of check against time of use").
const untrustedFetch =
  env.DENO_DEPLOYMENT_ID === undefined
    ? pinnedFetch({
        allowPrivate: loaded instanceof Error ? false : loaded.config.security.allow_private_urls,
        nameServer: parseNameServer(env.DENO_DNS_SERVER),
        log: consoleLogger,
      }).fetch
    : fetchPort;

const leaseMs =
  env.DENO_FLIGHT_LEASE_MS === undefined ? DEFAULT_FLIGHT_TIMING.leaseMs : Number(env.DENO_FLIGHT_LEASE_MS);
// At most 10 minutes: a crashed leader holds its key that long, and a third of it must stay a
// valid timer (past 2^31 ms it fires every millisecond).
if (!Number.isInteger(leaseMs) || leaseMs < 10 || leaseMs > 600_000)
  fail(
    `DENO_FLIGHT_LEASE_MS must be a whole number of milliseconds from 10 to 600000 (got ${env.DENO_FLIGHT_LEASE_MS})`,
  );
// Deno Deploy's KV tells every isolate of a change; a local KV file tells only its own process.
const watch =
  env.DENO_FLIGHT_WATCH === undefined ? env.DENO_DEPLOYMENT_ID !== undefined : env.DENO_FLIGHT_WATCH === "true";
// One process is its own single-flight point; processes sharing a KV coordinate through it.
const flight: SingleFlight = singleProcess
  ? new FlightCoordinator({
      election: new CopyElection(cache.processCopy()),
      fetch: fetchPort,
      untrustedFetch,
      log: consoleLogger,
    })
  : new DenoKvFlight(
      kv,
      cache,
      { fetch: fetchPort, untrustedFetch, log: consoleLogger, clock: Date.now },
      { ...DEFAULT_FLIGHT_TIMING, leaseMs, watch },
    );
// On Deno the flight's authoritative copy is the read tier itself (`cache`), so a purge's delete
// there already drops it: the app's flight forgets nothing more (it deleted the key twice).
const appFlight: SingleFlight = {
  run: (key, job, options) => flight.run(key, job, options),
  forget: async () => false,
  joiners: (key) => flight.joiners(key),
};
const embeds: EmbedCounter = singleProcess ? new MemoryEmbedCounter(Date.now) : new DenoKvEmbedCounter(kv, Date.now);

// The savings ledger: counted in memory, written to Deno KV after each response (LEDGER_MODE=off:
// nothing is counted, for the bench's comparison only).
const ledgerStore = new DenoKvLedgerStore(kv);
const ledger = env.LEDGER_MODE === "off" ? null : new LedgerBuffer(ledgerStore, consoleLogger);

// The app's lines (one per request) are written after the response is handed over, not before: a
// console write is a blocking write on the request's thread (docs/benchmarks.md).
const appLog = afterResponseLogger(writeText);
const app = createApp({
  runtime: "deno",
  version: pkg.version,
  config: () => {
    if (loaded instanceof Error) throw loaded;
    return loaded;
  },
  cache,
  flight: appFlight,
  fetch: fetchPort,
  untrustedFetch,
  clock: Date.now,
  log: appLog,
  fitImage: createImageFitter(await loadVisionWasm()),
  embeds,
  dnsResolver: dnsResolverPool(fetchPort, Date.now, consoleLogger),
  ledger: ledger ?? { record: () => {} },
  ledgerStore,
});

const port = Number(flags.port ?? env.PORT ?? 8787);
if (!Number.isInteger(port) || port < 0 || port > 65535)
  fail(`the port must be a whole number from 0 to 65535 (got ${flags.port ?? env.PORT})`);
const hostname = flags.hostname ?? env.HOSTNAME ?? "127.0.0.1";
const coordination = singleProcess ? "in-process" : "deno-kv";
const ledgerFlushMs = ledgerFlushDelay(env.LEDGER_FLUSH_MS);
// What a request counts after its response went out (a stream that ended) waits at most 5 s.
if (ledger) Deno.unrefTimer(setInterval(() => void ledger.flush(), 5_000));
// A stop (a process manager's SIGTERM, Ctrl-C) writes what is still counted in memory first: the
// counts of the last LEDGER_FLUSH_MS (up to 10 s) were lost on every restart. A store that does not
// answer holds the exit 2 s at most.
if (ledger)
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    try {
      Deno.addSignalListener(signal, () => {
        const waited = new Promise((resolve) => setTimeout(resolve, 2_000));
        void Promise.race([ledger.flush(), waited]).finally(() => {
          appLog.drain();
          Deno.exit(0);
        });
      });
    } catch {
      // Not a signal this platform has (Windows takes SIGINT only).
    }
  }

/**
 * Answers, then writes what the request counted, off its path (the flush never rejects); the
 * lines logged meanwhile are written after the response is handed over.
 */
async function serve(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> {
  appLog.after(info.completed);
  const response = await app.fetch(request);
  if (ledger) void ledger.flushAfter(ledgerFlushMs);
  return response;
}
try {
  Deno.serve(
    {
      port,
      hostname,
      onListen: ({ port }) =>
        console.log(
          JSON.stringify({ level: "info", event: "listening", url: `http://${hostname}:${port}`, coordination }),
        ),
    },
    serve,
  );
} catch (error) {
  if (!(error instanceof Deno.errors.AddrInUse)) throw error;
  fail(
    `${hostname}:${port} is already in use (is npm run dev running?); choose another port: npm run dev:deno -- --port ${port + 1}`,
  );
}
