/**
 * The only way the service fetches a user-supplied URL: redirects followed by hand with the whole
 * gate re-run on every hop, one deadline for the whole exchange, and a byte limit on the body.
 */
import type { FetchFn } from "../ports";
import { AppError } from "../http/errors";
import { type GateOptions, assertAllowedByPolicy, assertNoSecretInUrl, assertSsrfSafe, gateUrl } from "./gate";
import { FetchLimitError } from "./refusal";
import { readAtMost } from "../bytes";
import { Deadline } from "../deadline";

export interface SafeFetchOptions {
  fetch: FetchFn;
  gate: GateOptions;
  /** The body is read up to this many bytes; one byte more is `too_large`. */
  maxBytes: number;
  /** One deadline for every hop and the body; past it the fetch is `fetch_failed`. */
  timeoutMs: number;
  headers?: HeadersInit;
  method?: "GET" | "HEAD";
  /** Default 5 (docs/web.md, "The order of steps"). */
  maxRedirects?: number;
  /** Return false to refuse the final response's media type (`unsupported_content`). */
  acceptContentType?: (mediaType: string) => boolean;
  /**
   * Look at the body of a failure answer with one of `statuses` (at most FAILED_BODY_BYTES of it)
   * before it becomes `fetch_failed`: a bot wall's 403 is told apart from a plain one this way.
   * The error `check` returns is thrown instead.
   */
  inspectFailure?: {
    statuses: ReadonlySet<number>;
    check(status: number, headers: Headers, body: Uint8Array): Error | null;
  };
  /** What is fetched, as the messages name it: "page" (default) or "image" ("The image at … could not be fetched"). */
  noun?: "page" | "image";
}

/** How much of a failure answer `inspectFailure` sees; challenge pages are far smaller. */
const FAILED_BODY_BYTES = 256 * 1024;

export interface SafeFetchResult {
  /** After redirects. */
  finalUrl: string;
  /** Some hop's host passed only as a local one (`security.allow_private_urls`; see assertSsrfSafe). */
  local: boolean;
  status: number;
  headers: Headers;
  body: Uint8Array;
}

/**
 * Answers a runtime's fetch got by connecting to an address open only under
 * `security.allow_private_urls`, where it resolves the name again itself (Deno's pinned fetch: its
 * resolver may answer a private address where the DNS-over-HTTPS check saw a public one). A page
 * reached so is `local`, like one whose checked host was, and is never stored.
 */
export const REACHED_LOCAL = new WeakSet<Response>();

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Never forwarded to another origin on a redirect (the fetch standard drops them too). */
const ORIGIN_BOUND_HEADERS = ["authorization", "cookie", "proxy-authorization"];

class DeadlineExceeded extends Error {}

/**
 * Fetch a user-supplied URL safely. Throws AppError (`secret_in_url` 422, `blocked_private_address`
 * 403, `blocked_by_policy` 403, `invalid_request` 400 for the first URL, `fetch_failed` 502) or
 * FetchLimitError (`too_large` 413, `unsupported_content` 415); `toRefusal` maps both.
 *
 * @example
 * const page = await safeFetch(url, { fetch, gate, maxBytes: 5_000_000, timeoutMs: 60_000,
 *   headers: { accept: "text/markdown, text/html;q=0.9" } });
 */
export async function safeFetch(input: string | URL, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const maxRedirects = options.maxRedirects ?? 5;
  const noun = options.noun ?? "page";
  const first = await gateUrl(input.toString(), options.gate);
  let current = first.url;
  let local = first.local;
  const headers = new Headers(options.headers);
  const visited = new Set<string>([withoutFragment(current)]);

  const deadline = new Deadline(options.timeoutMs);
  // Past the deadline every wait rejects with DeadlineExceeded, which the steps below let through.
  const withinDeadline = <T>(work: Promise<T>): Promise<T> =>
    deadline.within(work).catch((error: unknown) => {
      throw deadline.expired ? new DeadlineExceeded() : error;
    });

  try {
    for (let redirects = 0; ; redirects++) {
      const response = await send(options, current, headers, deadline.signal, withinDeadline);
      local ||= REACHED_LOCAL.has(response);
      if (REDIRECT_STATUSES.has(response.status) && response.headers.has("location")) {
        const location = response.headers.get("location") ?? "";
        await discard(response);
        if (redirects >= maxRedirects) {
          throw fetchFailed(noun, current, `it redirected more than ${maxRedirects} times`);
        }
        const hop = await gateRedirect(location, current, options.gate, noun);
        const next = hop.url;
        local ||= hop.local;
        const key = withoutFragment(next);
        if (visited.has(key)) throw fetchFailed(noun, current, "its redirects form a loop");
        visited.add(key);
        if (next.origin !== current.origin) for (const name of ORIGIN_BOUND_HEADERS) headers.delete(name);
        current = next;
        continue;
      }
      if (response.status < 200 || response.status > 299) {
        const inspected = await inspectFailure(options, response, withinDeadline);
        if (inspected) throw inspected;
        throw fetchFailed(noun, current, `it answered with HTTP ${response.status}`);
      }
      const mediaType = mediaTypeOf(response.headers.get("content-type"));
      if (options.acceptContentType && !options.acceptContentType(mediaType)) {
        await discard(response);
        throw new FetchLimitError(
          415,
          "unsupported_content",
          `The ${noun} at ${current.hostname} is ${mediaType || "of an unknown content type"}, which this tool cannot read.`,
        );
      }
      const body =
        (options.method ?? "GET") === "HEAD"
          ? new Uint8Array(0)
          : await readLimited(response, options.maxBytes, current, withinDeadline, noun);
      return { finalUrl: current.href, local, status: response.status, headers: response.headers, body };
    }
  } catch (error) {
    if (error instanceof DeadlineExceeded) {
      throw new AppError(
        502,
        "fetch_failed",
        `The ${noun} at ${current.hostname} did not answer within ${formatSeconds(options.timeoutMs)} s.`,
      );
    }
    throw error;
  } finally {
    deadline.clear();
  }
}

async function send(
  options: SafeFetchOptions,
  url: URL,
  headers: Headers,
  signal: AbortSignal,
  withinDeadline: <T>(work: Promise<T>) => Promise<T>,
): Promise<Response> {
  try {
    return await withinDeadline(
      options.fetch(url.href, { method: options.method ?? "GET", headers, redirect: "manual", signal }),
    );
  } catch (error) {
    if (error instanceof DeadlineExceeded || signal.aborted) throw new DeadlineExceeded();
    // The fetch port's own refusal (Deno's connect-time address check) is said as it is.
    if (error instanceof AppError) throw error;
    throw fetchFailed(options.noun ?? "page", url, "the connection failed", error);
  }
}

/**
 * A redirect target goes through the whole gate again: secrets (in the Location as sent and as
 * resolved), SSRF, policy. A target that is not an http(s) URL is a failed fetch, not a bad request.
 */
async function gateRedirect(
  location: string,
  current: URL,
  gate: GateOptions,
  noun: string,
): Promise<{ url: URL; local: boolean }> {
  const where = `A redirect from ${current.hostname}`;
  assertNoSecretInUrl(location, where);
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw fetchFailed(noun, current, "it redirected to an unparseable location");
  }
  assertNoSecretInUrl(next.href, where);
  let local: boolean;
  try {
    ({ local } = await assertSsrfSafe(next, gate));
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      throw fetchFailed(noun, current, "it redirected to something other than an http or https URL with a host");
    }
    throw error;
  }
  assertAllowedByPolicy(next, gate.blocklist);
  return { url: next, local };
}

async function readLimited(
  response: Response,
  maxBytes: number,
  url: URL,
  withinDeadline: <T>(work: Promise<T>) => Promise<T>,
  noun: string,
): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(response);
    throw tooLarge(noun, url, maxBytes);
  }
  if (response.body === null) return new Uint8Array(0);
  try {
    return await readAtMost(response.body, maxBytes, () => tooLarge(noun, url, maxBytes), withinDeadline);
  } catch (error) {
    if (error instanceof FetchLimitError || error instanceof DeadlineExceeded) throw error;
    throw fetchFailed(noun, url, `the connection broke while reading the ${noun}`, error);
  }
}

/** The caller's verdict on a failure answer's (bounded) body, or null; the body is always released. */
async function inspectFailure(
  options: SafeFetchOptions,
  response: Response,
  withinDeadline: <T>(work: Promise<T>) => Promise<T>,
): Promise<Error | null> {
  const inspect = options.inspectFailure;
  if (!inspect?.statuses.has(response.status) || response.body === null) {
    await discard(response);
    return null;
  }
  const overLimit = new Error("failure body over the inspection limit");
  let body: Uint8Array;
  try {
    body = await readAtMost(response.body, FAILED_BODY_BYTES, () => overLimit, withinDeadline);
  } catch (error) {
    if (error instanceof DeadlineExceeded) throw error;
    // Too long or broken: an ordinary failure.
    return null;
  }
  return inspect.check(response.status, response.headers, body);
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to free; the connection is gone already.
  }
}

function fetchFailed(noun: string, url: URL, why: string, cause?: unknown): AppError {
  return new AppError(502, "fetch_failed", `The ${noun} at ${url.hostname} could not be fetched: ${why}.`, { cause });
}

function tooLarge(noun: string, url: URL, maxBytes: number): FetchLimitError {
  return new FetchLimitError(
    413,
    "too_large",
    `The ${noun} at ${url.hostname} is larger than the ${maxBytes}-byte limit.`,
  );
}

function withoutFragment(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy.href;
}

/** `text/html; charset=utf-8` → `text/html`, restricted to media-type characters. */
function mediaTypeOf(contentType: string | null): string {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type.slice(0, 100) : "";
}

function formatSeconds(ms: number): string {
  return (ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1);
}
