/**
 * The Workers entry: builds the app from bindings (once per env object), exports the DOs, and
 * flushes the savings ledger after each response with `waitUntil`, off the request path.
 */
import { env as startEnv } from "cloudflare:workers";
import { createApp } from "../shared/app";
import type { LedgerBuffer } from "../shared/stats/ledger";
import { reportConfigAtStart, workersDeps, workersLedger } from "./deps";
import type { WorkerEnv } from "./env";

export { FlightDO } from "./flight.do";
export { LedgerDO } from "./ledger.do";
export { SessionDO } from "./session.do";

/** How long the ledger gathers before a write (LEDGER_FLUSH_MS, default 1 s; docs/stats.md). */
const ledgerFlushMs = (env: WorkerEnv): number => {
  const ms = Number(env.LEDGER_FLUSH_MS ?? 1000);
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, 10_000) : 1000;
};

reportConfigAtStart(startEnv as unknown as WorkerEnv);

const apps = new WeakMap<object, { app: ReturnType<typeof createApp>; ledger: LedgerBuffer | null }>();

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    let built = apps.get(env);
    if (!built) {
      const ledger = workersLedger(env);
      built = { app: createApp(workersDeps(env, ledger ? { ledger } : {})), ledger };
      apps.set(env, built);
    }
    const response = await built.app.fetch(request, env, ctx);
    const { ledger } = built;
    if (!ledger) return response;
    const flush = ledger.flushAfter(ledgerFlushMs(env));
    if (flush) ctx.waitUntil(flush);
    // A stream (the proxy's) counts when it ends: flush again then.
    if (response.body && response.headers.get("content-type")?.startsWith("text/event-stream")) {
      const counted = new TransformStream({ flush: () => ctx.waitUntil(ledger.flush()) });
      return new Response(response.body.pipeThrough(counted), response);
    }
    return response;
  },
} satisfies ExportedHandler<WorkerEnv>;
