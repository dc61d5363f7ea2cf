/**
 * The Deno entry: the same app as on Workers, built from Deno's ports (Deno KV as the cache and
 * authoritative copy, an in-process single-flight and repeat-cap ledger). Configuration comes from
 * an optional config.json (section tables, as in wrangler.toml) and environment variables.
 *
 *   deno run --allow-net --allow-read --allow-env deno/main.ts
 *   PORT=8787 HOSTNAME=127.0.0.1 CONFIG_PATH=./config.json DENO_KV_PATH=./cache.sqlite3
 */
import { createApp } from "../shared/app";
import { loadConfig, type LoadedConfig } from "../shared/config/config.load";
import { consoleLogger } from "../shared/log";
import { dnsResolverPool } from "../shared/safety/dns";
import { createImageFitter } from "../shared/vision/fit";
import { FlightCoordinator } from "../shared/web/flight";
import { DenoKvStore } from "./deno-kv.store";
import { MemoryEmbedCounter } from "./embeds.memory";
import { loadVisionWasm } from "./vision-codecs";

const env = Deno.env.toObject();

async function readConfigTables(): Promise<Record<string, unknown>> {
  const path = env.CONFIG_PATH ?? "config.json";
  try {
    return JSON.parse(await Deno.readTextFile(path)) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && env.CONFIG_PATH === undefined) return {};
    throw new Error(`cannot read the configuration file ${path}: ${error instanceof Error ? error.message : error}`);
  }
}

const tables = await readConfigTables();
let loaded: LoadedConfig | Error;
try {
  loaded = loadConfig({ ...tables, ...env });
} catch (error) {
  loaded = error as Error; // answered as a 500 config_error on every request, as on Workers
}
const pkg = JSON.parse(await Deno.readTextFile(new URL("../package.json", import.meta.url))) as { version: string };
const kv = await Deno.openKv(env.DENO_KV_PATH);
const cache = new DenoKvStore(kv);
const fetchPort = (input: Request | string | URL, init?: RequestInit) => fetch(input, init);

const app = createApp({
  runtime: "deno",
  version: pkg.version,
  config: () => {
    if (loaded instanceof Error) throw loaded;
    return loaded;
  },
  cache,
  // One process: the in-process coordinator is the single-flight point, Deno KV its copy.
  flight: new FlightCoordinator({ authority: cache, fetch: fetchPort, log: consoleLogger }),
  fetch: fetchPort,
  clock: Date.now,
  log: consoleLogger,
  fitImage: createImageFitter(await loadVisionWasm()),
  embeds: new MemoryEmbedCounter(Date.now),
  dnsResolver: dnsResolverPool(fetchPort, Date.now),
});

const port = Number(env.PORT ?? 8787);
const hostname = env.HOSTNAME ?? "127.0.0.1";
Deno.serve({ port, hostname, onListen: ({ port }) => console.log(JSON.stringify({ level: "info", event: "listening", url: `http://${hostname}:${port}` })) }, app.fetch);
