/**
 * The one way an adapter talks to its backend: timeout, status mapping and body parsing in one
 * place, so every provider fails the same way and no upstream body or API key reaches a client.
 */
import type { z } from "zod";
import type { FetchFn } from "../../http/fetch.types";
import { type AppError, providerError, providerTimeout } from "../../http/errors";
import type { ProviderSettings } from "./provider.types";
import { Deadline } from "../../deadline";

/** How much of an upstream error body is kept (redacted) in the private, logged-only cause. */
const CAUSE_SNIPPET_CHARS = 200;

/**
 * Call a provider and parse its JSON answer. The deadline covers the whole exchange, body
 * included: a backend that sends headers quickly and then stalls still times out.
 *
 * @example
 * const body = await callProvider(settings, fetch, `${settings.baseUrl}/search`, {
 *   method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(q),
 * });
 */
export async function callProvider(
  settings: ProviderSettings,
  fetch: FetchFn,
  url: string,
  init: RequestInit = {},
): Promise<unknown> {
  const text = await callProviderText(settings, fetch, url, withDefaultAccept(init, "application/json"));
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw providerError(settings.name, "its answer was not valid JSON", { reason: String(cause) });
  }
}

/** Call a provider whose answer is not JSON (an HTML results page, plain text). */
export async function callProviderText(
  settings: ProviderSettings,
  fetch: FetchFn,
  url: string,
  init: RequestInit = {},
): Promise<string> {
  const deadline = new Deadline(settings.timeoutMs, init.signal ?? undefined);
  try {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: deadline.signal });
    } catch (cause) {
      throw deadline.expired
        ? timeoutError(settings)
        : providerError(settings.name, "the request could not be sent (network error)", describeCause(cause, settings));
    }
    let body: string;
    try {
      body = await response.text();
    } catch (cause) {
      throw deadline.expired
        ? timeoutError(settings)
        : providerError(settings.name, "the connection broke while reading its answer", describeCause(cause, settings));
    }
    if (!response.ok) throw statusError(settings, response.status, body);
    return body;
  } finally {
    deadline.clear();
  }
}

/** Map a failure status to a 502 that names the provider and status and nothing upstream said. */
function statusError(settings: ProviderSettings, status: number, upstreamBody = ""): AppError {
  const cause = { status, body: redact(upstreamBody.slice(0, CAUSE_SNIPPET_CHARS), settings.apiKey) };
  if (status === 401 || status === 403) {
    const why = settings.apiKey
      ? `HTTP ${status}: it rejected the configured API key; check the key for this provider`
      : `HTTP ${status}: it needs an API key and none is configured`;
    return providerError(settings.name, why, cause);
  }
  if (status === 429) return providerError(settings.name, "HTTP 429: rate limited", cause);
  if (status === 402) return providerError(settings.name, "HTTP 402: the account has no credits left", cause);
  return providerError(settings.name, `HTTP ${status}`, cause);
}

/** Join the operator's base URL and an API path without doubling or losing a slash. */
export function providerUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/**
 * POSTs a JSON payload to `path` under the provider's base URL, with the key as a bearer token (or
 * in the named header), and returns the parsed JSON answer.
 * @example await postJson(settings, fetch, "/search", { query }, { keyHeader: "x-api-key" })
 */
export function postJson(
  settings: ProviderSettings,
  fetch: FetchFn,
  path: string,
  payload: unknown,
  options: { keyHeader?: string } = {},
): Promise<unknown> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (settings.apiKey) {
    if (options.keyHeader) headers[options.keyHeader] = settings.apiKey;
    else headers.authorization = `Bearer ${settings.apiKey}`;
  }
  return callProvider(settings, fetch, providerUrl(settings.baseUrl, path), {
    method: "POST",
    headers,
    body: JSON.stringify(payload),
  });
}

/** A 502 for a 2xx answer whose shape is not what the provider documents. */
export function unexpectedShape(settings: ProviderSettings, what: string, cause?: unknown): AppError {
  return providerError(settings.name, `its answer had an unexpected shape (${what})`, cause);
}

/**
 * Parses a provider's 2xx answer with the zod schema of its documented response, so nothing
 * unvalidated reaches a caller or the cache. A mismatch is a 502 naming the field, never the value.
 * @example const body = parseAnswer(settings, TavilySearchResponse, await postJson(settings, fetch, "/search", q));
 */
export function parseAnswer<S extends z.ZodType>(settings: ProviderSettings, schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "the answer";
  // The issue code and path only: zod messages may quote what the provider sent.
  throw unexpectedShape(settings, `${where}: ${issue ? issueCode(issue) : "invalid"}`, {
    issues: parsed.error.issues.slice(0, 3).map((i) => ({ path: i.path.map(String), code: issueCode(i) })),
  });
}

/** A discriminated union that matched no branch reports its discriminator: that value is what is wrong. */
function issueCode(issue: z.core.$ZodIssue): string {
  return issue.code === "invalid_union" && "discriminator" in issue ? "invalid_value" : issue.code;
}

function timeoutError(settings: ProviderSettings): AppError {
  // One decimal keeps sub-second test timeouts readable ("0.2 s") without noise for whole seconds.
  return providerTimeout(settings.name, Math.round(settings.timeoutMs / 100) / 10);
}

function withDefaultAccept(init: RequestInit, accept: string): RequestInit {
  const headers = new Headers(init.headers);
  if (!headers.has("accept")) headers.set("accept", accept);
  return { ...init, headers };
}

function describeCause(cause: unknown, settings: ProviderSettings): { reason: string } {
  const reason = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return { reason: redact(reason, settings.apiKey) };
}

function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}
