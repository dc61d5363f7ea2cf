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

/**
 * A response the app built, with the headers it was built with (`x-request-id` among them): the
 * request-id middleware and the request log read these, never the Response's own `headers`. On
 * Deno a response whose headers were never read is handed to the server as built; the first read
 * of `headers` throws that away and builds the list again (docs/speed.md).
 */
export interface BuiltResponse {
  response: Response;
  headers: Readonly<Record<string, string>>;
}

type LogVariables = { requestId: string; logFields?: RequestLogFields; built?: BuiltResponse };

/** Stack lines kept for a real bug: enough to find it, not a screenful. */
const STACK_LINES = 8;

/**
 * The middleware: times the request and writes its line once the response is built.
 * @example app.use("*", requestLog(deps.log, deps.clock));
 */
export function requestLog<E extends { Variables: LogVariables } = { Variables: LogVariables }>(
  log: Logger,
  clock: () => number,
): MiddlewareHandler<E> {
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

function requestLine<E extends { Variables: LogVariables }>(c: Context<E>, ms: number): Record<string, unknown> {
  const built = c.get("built");
  const cache = built?.response === c.res ? built.headers["x-cache"] : c.res.headers.get("x-cache");
  return {
    request_id: c.get("requestId"),
    method: c.req.method,
    route: routeOf(requestPath(c.req.url)),
    status: c.res.status,
    ...(cache ? { cache: cache.toLowerCase() } : {}),
    ...c.get("logFields"),
    ms,
  };
}

/**
 * The path of a request's URL as `new URL(url).pathname` gives it, without parsing the URL again:
 * a request's `url` is already a serialised absolute URL, so its path runs from the first `/`
 * after the authority to the query or fragment.
 *
 * @example requestPath("http://127.0.0.1:8787/v1/web_search?x=1") // "/v1/web_search"
 */
export function requestPath(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  const fragment = url.indexOf("#", start);
  const end = Math.min(query === -1 ? url.length : query, fragment === -1 ? url.length : fragment);
  return url.slice(start, end);
}

/** Paths whose logged form is remembered (at most this long, this many, the oldest dropped first). */
const REMEMBERED_PATH_CHARS = 256;
const REMEMBERED_PATHS = 256;
const loggedPaths = new Map<string, string>();

/** loggedPath, its secret scan run once per path an isolate (or process) sees again (every route's own). */
function routeOf(path: string): string {
  const known = loggedPaths.get(path);
  if (known !== undefined) return known;
  const logged = loggedPath(path);
  if (path.length <= REMEMBERED_PATH_CHARS) {
    loggedPaths.set(path, logged);
    if (loggedPaths.size > REMEMBERED_PATHS) loggedPaths.delete(loggedPaths.keys().next().value as string);
  }
  return logged;
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
