/**
 * The Workers entry: builds the app from bindings (once per env object), exports the DOs, and
 * writes each request's log lines and flushes the savings ledger after its response with
 * `waitUntil`, off the request path.
 */
import { env as startEnv } from "cloudflare:workers";
import { createApp } from "../shared/app/app";
import { requestPath } from "../shared/app/request-log";
import { LLM_PROVIDERS } from "../shared/llm/llm-providers.catalog";
import { type LedgerBuffer, ledgerFlushDelay } from "../shared/stats/ledger";
import { reportConfigAtStart, workersDeps, workersLedger } from "./deps";
import type { WorkerEnv } from "./env";
import { answerThenLog } from "./log";

export { FlightDO } from "./flight.do";
export { LedgerDO } from "./ledger.do";
export { SessionDO } from "./session.do";

reportConfigAtStart(startEnv as unknown as WorkerEnv);

interface Built {
  app: ReturnType<typeof createApp>;
  ledger: LedgerBuffer | null;
  /** LEDGER_FLUSH_MS, read once per env object. */
  flushMs: number;
}

const apps = new WeakMap<object, Built>();

/** The provider proxy's paths (`/anthropic/*`, `/openai/*`): their answers record usage as their body ends. */
const PROXY_PREFIXES = LLM_PROVIDERS.map((spec) => `/${spec.name}/`);
const countsAtEnd = (request: Request) => {
  const path = requestPath(request.url);
  return PROXY_PREFIXES.some((prefix) => path.startsWith(prefix));
};

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    let built = apps.get(env);
    if (!built) {
      const ledger = workersLedger(env);
      built = {
        app: createApp(workersDeps(env, ledger ? { ledger } : {})),
        ledger,
        flushMs: ledgerFlushDelay(env.LEDGER_FLUSH_MS),
      };
      apps.set(env, built);
    }
    const { app } = built;
    const response = await answerThenLog(ctx, () => app.fetch(request, env, ctx));
    const { ledger, flushMs } = built;
    if (!ledger) return response;
    const flush = ledger.flushAfter(flushMs);
    if (flush) ctx.waitUntil(flush);
    // A proxied answer (streamed or not) counts its usage when its body ends, which may be after
    // the flush above was taken: schedule a flush then (or join the waiting one), however it ends:
    // read to its end, broken off, or cancelled by the caller (an agent's Esc). The path first:
    // `response.body` is a call into the runtime, and every other answer asked it (docs/speed.md).
    if (countsAtEnd(request) && response.body) {
      const atEnd = () => {
        const flushed = ledger.flushAfter(flushMs);
        if (flushed) ctx.waitUntil(flushed);
      };
      const source = response.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await source.read();
          } catch (error) {
            atEnd();
            controller.error(error);
            return;
          }
          if (chunk.done) {
            controller.close();
            atEnd();
          } else controller.enqueue(chunk.value);
        },
        async cancel(reason) {
          await source.cancel(reason);
          atEnd();
        },
      });
      return new Response(body, response);
    }
    return response;
  },
} satisfies ExportedHandler<WorkerEnv>;
