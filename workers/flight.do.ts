/**
 * FlightDO: one Durable Object per cache key (named by the key's hash), the single-flight point
 * and the authoritative copy for the TTL. The logic is the runtime-agnostic FlightCoordinator;
 * this class only binds it to DO storage and KV.
 */
import { DurableObject } from "cloudflare:workers";
import { consoleLogger } from "../shared/log";
import type { Job } from "../shared/web/job.types";
import { CopyElection, FlightCoordinator } from "../shared/web/flight";
import type { FlightOptions, FlightOutcome } from "../shared/ports";
import { platformFetch } from "./platform-fetch";
import { DurableObjectStore } from "./cache.do-storage";
import { KvStore } from "./cache.kv";

/** The one binding a FlightDO uses (declared here so env.ts and the DO do not import each other). */
interface FlightEnv {
  CACHE: KVNamespace;
}

export class FlightDO extends DurableObject<FlightEnv> {
  private readonly coordinator: FlightCoordinator;

  constructor(ctx: DurableObjectState, env: FlightEnv) {
    super(ctx, env);
    this.coordinator = new FlightCoordinator({
      // The object's input gate makes its own copy the one election for its key.
      election: new CopyElection(new DurableObjectStore(ctx.storage), new KvStore(env.CACHE)),
      fetch: platformFetch,
      log: consoleLogger,
    });
  }

  /** RPC: answer `job` for `key` once for every concurrent caller. */
  async run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    return this.coordinator.run(key, job, options);
  }

  /** RPC: drop this key's authoritative copy (a purge); a call in flight still stores its answer. */
  async forget(key: string): Promise<boolean> {
    return this.coordinator.forget(key);
  }

  /** RPC: how many callers of `key` wait on the call in flight here (read-only, for tests). */
  async joiners(key: string): Promise<number> {
    return this.coordinator.joiners(key);
  }

  /** Every entry here has expired: drop them all. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
