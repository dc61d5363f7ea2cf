/**
 * What of a caller's request may reach the provider (docs/proxy.md, "What reaches the provider"):
 * the method, the path (one of the provider's own, under the configured base path) and the
 * headers, by allow-list. Everything here refuses before a byte goes upstream.
 */
import { AppError } from "../http/errors";
import type { LlmProviderSpec, ProxiedPath } from "../llm/llm-provider.types";
import { LLM_PROVIDERS } from "../llm/llm-providers.catalog";

/** The service's own request headers: its token in caller's-key mode, and the session id. */
export const SERVICE_TOKEN_HEADER = "x-service-token";
export const SESSION_HEADER = "x-session-id";

/** The methods a provider API takes; any other (TRACE, PUT, PATCH, HEAD, CONNECT…) is a 405. */
export const PROXY_METHODS: readonly string[] = ["GET", "POST", "DELETE", "OPTIONS"];

/**
 * Request headers a provider API uses: the body's type and encoding, what the caller accepts, the
 * page's origin (the provider answers CORS), the SDKs' identification (`user-agent`,
 * `x-stainless-*`), retries' idempotency keys, a client's own request id, and the providers' own
 * `anthropic-*` / `openai-*` headers (`anthropic-version`, `anthropic-beta`, `openai-organization`,
 * `openai-project`, `openai-beta`…). Anything else stays here unless `proxy.forward_headers` names it.
 */
const FORWARDED = new Set([
  "content-type",
  "content-encoding",
  "accept",
  "origin",
  "user-agent",
  "idempotency-key",
  "x-client-request-id",
]);
const FORWARDED_PREFIXES = ["anthropic-", "openai-", "x-stainless-"];

/**
 * Never forwarded, whatever `proxy.forward_headers` says: per-hop headers, what the runtime sets
 * itself, the caller's cookies, the service's own headers and every provider's key headers (the
 * upstream's key is set by the credential, never copied).
 */
export const NEVER_FORWARDED: ReadonlySet<string> = new Set([
  "host",
  "cookie",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "content-length",
  SERVICE_TOKEN_HEADER,
  SESSION_HEADER,
  ...LLM_PROVIDERS.flatMap((spec) => spec.credentialHeaders),
]);

/** A header name as `proxy.forward_headers` takes it: a token, or a token prefix ending in `*`. */
export const FORWARD_HEADER_PATTERN = /^[a-z0-9!#$%&'+.^_`|~-]+\*?$/;

/**
 * Whether a request header goes upstream: the built-in allow-list, then the operator's names
 * (`cf-aig-*`, an exact name). The names in NEVER_FORWARDED are refused by the configuration.
 */
export function headerForwarder(extra: readonly string[]): (name: string) => boolean {
  const exact = new Set(extra.filter((name) => !name.endsWith("*")));
  const prefixes = [...FORWARDED_PREFIXES, ...extra.filter((name) => name.endsWith("*")).map((n) => n.slice(0, -1))];
  return (name) =>
    !NEVER_FORWARDED.has(name) &&
    (FORWARDED.has(name) || exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix)));
}

/** Most rounds of percent-decoding a segment gets: a gateway that decodes twice meets `%252F` as `/`. */
const DECODE_ROUNDS = 4;

/**
 * The provider's path a caller asked for (what follows `/<provider>` in the URL's path, which the
 * URL parser has already resolved `.`, `..`, `%2e%2e` segments of), checked and in its canonical form: one trailing slash is dropped (`/v1/messages/` is `/v1/messages`), and an
 * empty segment (`//v1/messages`), a backslash, an encoded slash or backslash (`%2F`, `%5C`, or
 * either encoded again), a dot segment in any spelling (`..`, `%2e%2e`, `.%2E`) or a control
 * character is refused: a gateway that decodes them would take the request out of the operator's
 * base path. A path differing from a conversation path only in letter case is refused too, so a
 * case-blind upstream cannot be sent a conversation the ledger never sees.
 * @throws AppError 400 invalid_request
 * @example providerPath(ANTHROPIC, "/anthropic/v1/messages/") // "/v1/messages"
 */
export function providerPath(spec: LlmProviderSpec, pathname: string): string {
  const prefix = `/${spec.name}`;
  // The router may have matched the URL before its dot segments were resolved: what is left must
  // still be under this provider's prefix.
  const raw = pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : pathname === prefix ? "" : null;
  const path = raw === null ? "" : raw === "" ? "/" : raw.length > 1 && raw.endsWith("/") ? raw.slice(0, -1) : raw;
  const refused = () =>
    new AppError(
      400,
      "invalid_request",
      `The path is not a path of the ${spec.name} API: an empty segment (//), a backslash, an encoded slash or backslash (%2F, %5C) and a dot segment (.., %2e%2e) are refused, so no request leaves providers.${spec.name}_base_url.`,
    );
  if (raw === null || !path.startsWith("/")) throw refused();
  if (path === "/") return path;
  for (const segment of path.slice(1).split("/")) {
    if (segment === "" || segment.includes("\\")) throw refused();
    let decoded = segment;
    for (let round = 0; round < DECODE_ROUNDS && decoded.includes("%"); round++) {
      try {
        decoded = decodeURIComponent(decoded);
      } catch {
        throw refused();
      }
      if (decoded.includes("/") || decoded.includes("\\")) throw refused();
    }
    if (decoded === "." || decoded === ".." || /[\u0000-\u001f\u007f]/.test(decoded)) throw refused();
  }
  if (!(path in spec.paths)) {
    const lower = path.toLowerCase();
    const meant = Object.keys(spec.paths).find((known) => known === lower);
    if (meant !== undefined)
      throw new AppError(400, "invalid_request", `Paths of the ${spec.name} API are case-sensitive: send ${meant}.`);
  }
  return path;
}

/** The conversation a request carries: its path's, sent with POST; null for any other request. */
export function conversationOf(spec: LlmProviderSpec, method: string, path: string): ProxiedPath | undefined {
  return method === "POST" && Object.hasOwn(spec.paths, path) ? spec.paths[path] : undefined;
}

/** The model list, which an SDK reads before it calls (forwarded with GET under the operator's key). */
const MODELS_PATH = "/v1/models";

/** Whether `path` is `prefix` or below it, segment-wise (`/v1/files` takes `/v1/files/x`, not `/v1/filesystem`). */
const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/**
 * Under the operator's key, whether a request may go upstream: the conversation paths (and
 * `count_tokens`) with POST, the model list with GET, and any method allowed on a path below one of
 * `proxy.allowed_paths`. Everything else would spend or expose the operator's account (its files,
 * batches, fine-tuned models) for a caller that holds only a service token.
 * @throws AppError 403 naming proxy.allowed_paths
 */
export function checkOperatorPath(
  spec: LlmProviderSpec,
  method: string,
  path: string,
  allowedPaths: readonly string[],
): void {
  if (conversationOf(spec, method, path)) return;
  if (method === "GET" && under(path, MODELS_PATH)) return;
  if (allowedPaths.some((prefix) => under(path, prefix))) return;
  const routes = [...Object.keys(spec.paths).map((known) => `POST ${known}`), `GET ${MODELS_PATH}`].join(", ");
  throw new AppError(
    403,
    "forbidden",
    `This service forwards only ${routes} with its own ${spec.name} key; the operator can forward more paths with proxy.allowed_paths.`,
  );
}
