/**
 * The Workers composition root: turns bindings into the app's ports. The configuration is parsed
 * once per isolate (per env object) and a config error is remembered the same way.
 */
import pkg from "../package.json";
import { CONFIG_PLACES, loadConfig, type LoadedConfig } from "../shared/config/config.load";
import { consoleLogger } from "../shared/log";
import { AppError } from "../shared/http/errors";
import type { AppDeps, EmbedCounter, Ledger, LedgerRow, LedgerStore, SingleFlight } from "../shared/ports";
import { LedgerBuffer } from "../shared/stats/ledger";
import type { SessionsResponse, StatsResponse } from "../shared/stats/stats.schema";
import type { WorkerEnv } from "./env";
import { KvStore } from "./cache.kv";
import { platformFetch } from "./platform-fetch";
import { createImageFitter } from "../shared/imaging/fit";
import { dnsResolverPool } from "../shared/safety/dns";
import { LEDGER_OBJECT } from "./ledger.do";
import { visionWasm } from "./vision-codecs";
import { workersLogger } from "./log";

const configs = new WeakMap<object, LoadedConfig | Error>();

function configOf(env: WorkerEnv): LoadedConfig {
  let loaded = configs.get(env);
  if (!loaded) {
    try {
      loaded = loadConfig(env, CONFIG_PLACES.workers);
    } catch (error) {
      loaded = error as Error;
    }
    configs.set(env, loaded);
  }
  if (loaded instanceof Error) throw loaded;
  return loaded;
}

/**
 * Says a configuration mistake when the isolate starts (wrangler dev prints it before the first
 * request); every request still answers it (a 503 from /healthz, a 500 config_error elsewhere).
 */
export function reportConfigAtStart(env: WorkerEnv): void {
  try {
    configOf(env);
  } catch (error) {
    consoleLogger.error("config_error", { message: error instanceof Error ? error.message : String(error) });
  }
}

/** Single-flight through the Durable Object named by the cache key. */
function durableFlight(namespace: WorkerEnv["FLIGHT"]): SingleFlight {
  return {
    run: (key, job, options) => namespace.get(namespace.idFromName(key)).run(key, job, options),
    forget: (key) => namespace.get(namespace.idFromName(key)).forget(key),
    joiners: (key) => namespace.get(namespace.idFromName(key)).joiners(key),
  };
}

/** Repeat-cap counters in the session's own Durable Object. */
function durableEmbeds(namespace: WorkerEnv["SESSIONS"]): EmbedCounter {
  const session = (id: string) => namespace.get(namespace.idFromName(id));
  return {
    reserve: (sessionId, imageKey, cap) => session(sessionId).reserve(imageKey, cap),
    release: (sessionId, imageKey) => session(sessionId).release(imageKey),
  };
}

/**
 * The ledger's buckets in the one LedgerDO; with the optional `LEDGER_ANALYTICS` binding each
 * batch also goes to Workers Analytics Engine, for deployments that outgrow one object
 * (docs/stats.md shows the SQL that reads it).
 */
export function durableLedgerStore(env: WorkerEnv): LedgerStore {
  const ledger = () => env.LEDGER.get(env.LEDGER.idFromName(LEDGER_OBJECT));
  const bound = () => {
    // A deployment whose wrangler.toml lost the binding counts nothing: no reading will succeed.
    if (env.LEDGER === undefined)
      throw new AppError(
        503,
        "stats_unavailable",
        "This deployment has no LEDGER binding (the Durable Object of class LedgerDO in wrangler.toml), so nothing is counted; see docs/stats.md.",
      );
    return ledger();
  };
  const analytics = env.LEDGER_ANALYTICS;
  return {
    async add(rows) {
      // The object first: it is what /v1/stats reads. Analytics Engine refuses past its data points
      // per invocation; that loses its copy of the batch (logged), never the object's.
      await ledger().add(rows);
      if (!analytics) return;
      try {
        // A session's rows repeat the LLM's under a session: the SQL of docs/stats.md would count them twice.
        for (const row of rows) if (row.session === undefined) analytics.writeDataPoint(analyticsPoint(row));
      } catch (error) {
        consoleLogger.warn("ledger_analytics_failed", { rows: rows.length, error: String(error).slice(0, 200) });
      }
    },
    report: async (request) => (await bound().report(request)) as StatsResponse,
    sessions: async (request) => (await bound().sessions(request)) as SessionsResponse,
  };
}

/** One counter as an Analytics Engine data point (the column order docs/stats.md's SQL reads). */
function analyticsPoint(row: LedgerRow): AnalyticsEngineDataPoint {
  return {
    indexes: [row.tool],
    blobs: [row.tool, row.provider, row.model, row.counter],
    doubles: [row.value, row.hour],
  };
}

/** Off for the bench's comparison only (`LEDGER_MODE=off`): nothing is counted. */
const ledgerOff = (env: WorkerEnv) =>
  env.LEDGER === undefined || (env as Record<string, unknown>).LEDGER_MODE === "off";

/** The ledger of one env object: gathers in memory; the Workers entry flushes it in waitUntil. */
export function workersLedger(env: WorkerEnv): LedgerBuffer | null {
  return ledgerOff(env) ? null : new LedgerBuffer(durableLedgerStore(env), consoleLogger);
}

const fitImage = createImageFitter(visionWasm);
const dnsResolver = dnsResolverPool(platformFetch, Date.now, consoleLogger);

const NO_LEDGER: Ledger = { record: () => {} };

export function workersDeps(env: WorkerEnv, overrides: Partial<AppDeps> = {}): AppDeps {
  return {
    runtime: "workerd",
    version: pkg.version,
    config: () => configOf(env),
    cache: new KvStore(env.CACHE),
    flight: durableFlight(env.FLIGHT),
    fetch: platformFetch,
    clock: Date.now,
    log: workersLogger,
    fitImage,
    embeds: durableEmbeds(env.SESSIONS),
    dnsResolver,
    ledger: NO_LEDGER,
    ledgerStore: durableLedgerStore(env),
    ...overrides,
  };
}
