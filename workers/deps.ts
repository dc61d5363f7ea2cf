/**
 * The Workers composition root: turns bindings into the app's ports. The configuration is parsed
 * once per isolate (per env object) and a config error is remembered the same way.
 */
import pkg from "../package.json";
import { CONFIG_PLACES, loadConfig, type LoadedConfig } from "../shared/config/config.load";
import { consoleLogger } from "../shared/log";
import type { AppDeps, EmbedCounter, SingleFlight } from "../shared/ports";
import type { WorkerEnv } from "./env";
import { KvStore } from "./kv.store";
import { createImageFitter } from "../shared/vision/fit";
import { dnsResolverPool } from "../shared/safety/dns";
import { visionWasm } from "./vision-codecs";

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

const fitImage = createImageFitter(visionWasm);
const dnsResolver = dnsResolverPool((input, init) => fetch(input, init), Date.now, consoleLogger);

export function workersDeps(env: WorkerEnv, overrides: Partial<AppDeps> = {}): AppDeps {
  return {
    runtime: "workerd",
    version: pkg.version,
    config: () => configOf(env),
    cache: new KvStore(env.CACHE),
    flight: durableFlight(env.FLIGHT),
    fetch: (input, init) => fetch(input, init),
    clock: Date.now,
    log: consoleLogger,
    fitImage,
    embeds: durableEmbeds(env.SESSIONS),
    dnsResolver,
    // Nothing is counted yet: the savings ledger (docs/stats.md) is not built.
    ledger: { record: () => {} },
    ...overrides,
  };
}
