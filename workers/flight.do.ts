/**
 * FlightDO: one Durable Object per cache key (named by the key's hash), the single-flight point
 * and the authoritative copy for the TTL. The logic is the runtime-agnostic FlightCoordinator;
 * this class only binds it to DO storage and KV.
 */
import { DurableObject } from "cloudflare:workers";
import { consoleLogger } from "../shared/log";
import type { Job } from "../shared/web/jobs";
import { FlightCoordinator, type FlightOptions, type FlightOutcome } from "../shared/web/flight";
import { DurableObjectStore } from "./do-storage.store";
import { KvStore } from "./kv.store";
import type { WorkerEnv } from "./env";

export class FlightDO extends DurableObject<WorkerEnv> {
  private readonly coordinator: FlightCoordinator;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.coordinator = new FlightCoordinator({
      authority: new DurableObjectStore(ctx.storage),
      publish: new KvStore(env.CACHE),
      fetch: (input, init) => fetch(input, init),
      log: consoleLogger,
    });
  }

  /** RPC: answer `job` for `key` once for every concurrent caller. */
  async run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    return this.coordinator.run(key, job, options);
  }

  /** Every entry here has expired: drop them all. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
