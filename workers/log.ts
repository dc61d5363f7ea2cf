/**
 * The Workers logger: a request's lines are written after its response, in `waitUntil`, not on
 * the request's path (docs/api.md, "Logs"). Under `wrangler dev` a console write is not cheap: the
 * isolate hands the line to the inspector and to stdout, and wrangler copies each line to its own
 * debug log file (docs/speed.md, "Where a hit's time goes on workerd, by removal").
 *
 * Each request gathers its own lines (through AsyncLocalStorage, so concurrent requests in one
 * isolate never mix theirs, and each line stays with its own invocation in Workers Logs); a line
 * made once its request's lines were taken (a `waitUntil` task's) or outside any request is
 * written at once.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "../shared/ports";

type Method = "log" | "warn" | "error";

interface Gathered {
  lines: Array<[Method, string]>;
  /** Taken by the entry: later lines are written at once. */
  taken: boolean;
}

const current = new AsyncLocalStorage<Gathered>();

const line =
  (level: "info" | "warn" | "error", method: Method) => (event: string, fields?: Record<string, unknown>) => {
    // Made into text at once: the fields are the caller's to change after this returns.
    const text = JSON.stringify({ level, event, ...fields });
    const gathered = current.getStore();
    if (gathered && !gathered.taken) gathered.lines.push([method, text]);
    else console[method](text);
  };

/** The app's logger on Workers: one JSON line per event, a request's written after its response. */
export const workersLogger: Logger = {
  info: line("info", "log"),
  warn: line("warn", "warn"),
  error: line("error", "error"),
};

/**
 * Runs `handle` gathering the lines it logs, then hands them to `ctx.waitUntil`, written on a
 * timer: after the response went back to the runtime, and before the invocation ends.
 * @example return answerThenLog(ctx, () => app.fetch(request, env, ctx));
 */
export async function answerThenLog(
  ctx: ExecutionContext,
  handle: () => Response | Promise<Response>,
): Promise<Response> {
  const gathered: Gathered = { lines: [], taken: false };
  try {
    return await current.run(gathered, handle);
  } finally {
    gathered.taken = true;
    if (gathered.lines.length > 0) ctx.waitUntil(writeSoon(gathered.lines));
  }
}

function writeSoon(lines: Array<[Method, string]>): Promise<void> {
  return new Promise((resolve) =>
    setTimeout(() => {
      for (const [method, text] of lines) console[method](text);
      resolve();
    }, 0),
  );
}
