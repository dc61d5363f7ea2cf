/**
 * Bearer-token auth for `/v1/*` and `/mcp` (api.md): tokens from the `API_TOKENS` secret,
 * compared in constant time; anonymous access only where `security.allow_anonymous` is on.
 */
import { sha256Hex } from "../hash";
import { AppError } from "./errors";

const unauthorized = (why: string) => new AppError(401, "unauthorized", why);

/** The tokens in the raw `API_TOKENS` value: comma-separated, trimmed, empty ones left out. */
export const apiTokens = (tokensSecret: string | undefined): string[] =>
  (tokensSecret ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");

/** Whether a request must present a token: tokens are configured, or anonymous access is off. */
export const tokenRequired = (tokensSecret: string | undefined, allowAnonymous: boolean): boolean =>
  apiTokens(tokensSecret).length > 0 || !allowAnonymous;

/** Whether a configuration (a `LoadedConfig`) takes calls without a token. */
export const takesAnonymousCalls = ({
  secrets,
  config,
}: {
  secrets: { API_TOKENS?: string };
  config: { security: { allow_anonymous: boolean } };
}): boolean => !tokenRequired(secrets.API_TOKENS, config.security.allow_anonymous);

/**
 * The caller's identity for scoping session state: SHA-256 of the `Authorization` header as sent
 * (one API token, one caller; without a token, every anonymous caller is one).
 */
export async function callerOf(authorization: string | null): Promise<string> {
  return authorization === null ? "anonymous" : sha256Hex(`caller\n${authorization}`);
}

/**
 * `sessionId` as this caller's: two callers who send the same session id (a default such as
 * "main", or one they have seen) never share a counter or a memory.
 *
 * @example await callerSession(await ctx.caller(), "agent-1") // 64 hex characters, different per caller
 */
export async function callerSession(caller: string, sessionId: string): Promise<string> {
  return sha256Hex(`${caller}\nsession\n${sessionId}`);
}

/**
 * Throws 401 unless the request may proceed.
 * @param tokensSecret the raw `API_TOKENS` value (comma-separated) or undefined
 */
export async function authorize(
  authorization: string | null,
  tokensSecret: string | undefined,
  allowAnonymous: boolean,
): Promise<void> {
  const tokens = apiTokens(tokensSecret);
  if (tokens.length === 0) {
    if (allowAnonymous) return;
    throw unauthorized(
      "This service has no API tokens configured and anonymous access is off; set the API_TOKENS secret and send Authorization: Bearer <token>.",
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) throw unauthorized("Send Authorization: Bearer <token> with one of the service's API tokens.");
  const presented = await digest(match[1]!);
  let accepted = false;
  for (const token of await tokenDigests(tokensSecret ?? "", tokens)) {
    // Compare every token (no early exit) on fixed-length digests, so timing says nothing.
    if (equalDigests(presented, token)) accepted = true;
  }
  if (!accepted) throw unauthorized("The bearer token is not valid for this service.");
}

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/**
 * The configured tokens' digests, computed once per `API_TOKENS` value (not once per request and
 * token). Kept as values, never as a promise: a Worker's request must not wait on another's.
 */
let configured: { secret: string; digests: Uint8Array[] } | undefined;

async function tokenDigests(secret: string, tokens: string[]): Promise<Uint8Array[]> {
  if (configured?.secret === secret) return configured.digests;
  const digests = await Promise.all(tokens.map(digest));
  configured = { secret, digests };
  return digests;
}

function equalDigests(a: Uint8Array, b: Uint8Array): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
