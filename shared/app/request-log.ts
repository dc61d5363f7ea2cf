/**
 * One JSON log line per request (docs/api.md, "Logs"): what happened, in fields an operator can
 * filter on. An expected failure (a provider down, a bad request) is that one line; only a real
 * bug (an error that is not an AppError, or `internal_error`) adds its stack. Never a query string,
 * a header value or a body: the path, the status and our own codes only.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { Logger, RequestLogFields } from "../ports";
import { AppError } from "../http/errors";
import { loggedPath } from "../safety/secrets";

/** Stack lines kept for a real bug: enough to find it, not a screenful. */
const STACK_LINES = 8;

/**
 * The middleware: times the request and writes its line once the response is built.
 * @example app.use("*", requestLog(deps.log, deps.clock));
 */
export function requestLog(
  log: Logger,
  clock: () => number,
): MiddlewareHandler<{ Variables: { requestId: string; logFields?: RequestLogFields } }> {
  return async (c, next) => {
    const started = clock();
    await next();
    const fields = requestLine(c, clock() - started);
    const error = c.error;
    if (!error) {
      // An answer built without throwing: a provider's failure the proxy relays (or answers in the
      // provider's shape, 502/504), /healthz's 503. Still ours or a provider's to mend.
      if (c.res.status >= 500) log.warn("request", fields);
      else log.info("request", fields);
    } else if (error instanceof AppError && error.code !== "internal_error") {
      // Expected: the client got a clear answer. Warn when it is ours or a provider's to mend.
      if (error.status < 500) return log.info("request", { ...fields, code: error.code });
      // The public message says which provider and what failed; the private cause, what it said.
      const cause = error.privateCause === undefined ? undefined : describe(error.privateCause);
      log.warn("request", { ...fields, code: error.code, message: describe(error.message), cause });
    } else {
      const cause = error instanceof AppError ? error.privateCause : error;
      log.error("request", { ...fields, code: "internal_error", error: describe(cause), stack: stackOf(cause) });
    }
  };
}

function requestLine(
  c: Context<{ Variables: { requestId: string; logFields?: RequestLogFields } }>,
  ms: number,
): Record<string, unknown> {
  const cache = c.res.headers.get("x-cache");
  return {
    request_id: c.get("requestId"),
    method: c.req.method,
    route: loggedPath(new URL(c.req.url).pathname),
    status: c.res.status,
    ...(cache ? { cache: cache.toLowerCase() } : {}),
    ...c.get("logFields"),
    ms,
  };
}

/** A URL's query and fragment: a runtime's error message may quote the URL it fetched. */
const URL_TAIL = /(https?:\/\/[^\s?#"'<>]+)[?#][^\s"'<>)]*/gi;

/** A cause as one string (an Error's name and message, or a plain cause's JSON), URLs cut before their query. */
function describe(cause: unknown): string {
  let text: string;
  if (cause instanceof Error) text = `${cause.name}: ${cause.message}`;
  else if (typeof cause === "string") text = cause;
  else {
    try {
      text = JSON.stringify(cause);
    } catch {
      text = String(cause);
    }
  }
  return text.replace(URL_TAIL, "$1?[query removed]");
}

function stackOf(cause: unknown): string | undefined {
  return cause instanceof Error
    ? cause.stack?.split("\n").slice(0, STACK_LINES).join("\n").replace(URL_TAIL, "$1?[query removed]")
    : undefined;
}
