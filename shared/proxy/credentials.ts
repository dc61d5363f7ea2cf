/**
 * The proxy's trust boundary for keys (docs/proxy.md, "Credentials"). Two modes:
 * - operator's key (the provider's secret is set): the caller presents one of `API_TOKENS` where its
 *   SDK puts the provider key; the service sends the operator's key upstream;
 * - caller's key (no secret): the caller's own key goes upstream unchanged; the service's token,
 *   when `API_TOKENS` is set, comes in `X-Service-Token`.
 * A provider key leaves this module only as a header to the configured upstream, and as its
 * SHA-256 (which keeps different callers' sessions apart). Nothing here logs.
 */
import { apiTokens, authorize } from "../http/auth";
import { AppError } from "../http/errors";
import { sha256Hex } from "../hash";
import type { LoadedConfig } from "../config/config.load";
import type { LlmProviderSpec } from "../llm/llm-provider.types";
import { SERVICE_TOKEN_HEADER } from "./request-policy";

export interface UpstreamCredential {
  /** Sets the key upstream receives (the operator's, or the caller's own unchanged). */
  apply(headers: Headers): void;
  /** SHA-256 of what the caller presented: the only trace of a credential the service keeps. */
  callerHash: string;
  /**
   * The operator's key in operator mode, undefined in caller mode: taken out of the provider's
   * error answers before they are relayed.
   */
  operatorKey?: string;
}

/**
 * A CORS preflight's (an `OPTIONS` request with `Origin` and `Access-Control-Request-Method`,
 * which a browser sends on its own before a cross-origin call and which never carries a key):
 * forwarded with no key, no body and only its CORS headers, so the provider answers its own
 * preflight. The call that follows is checked as any other.
 */
export const PREFLIGHT: UpstreamCredential = { apply: () => undefined, callerHash: "preflight" };

/**
 * Checks the caller and decides which key goes upstream.
 * @throws AppError 401 when the caller may not use the proxy (rendered in the provider's shape)
 */
export async function upstreamCredential(
  spec: LlmProviderSpec,
  headers: Headers,
  loaded: LoadedConfig,
): Promise<UpstreamCredential> {
  const { secrets, config } = loaded;
  const operatorKey = (secrets as Partial<Record<string, string>>)[spec.secretName];
  // The service's own token check (auth.ts), with a 401 that says where this mode expects it.
  const admit = (token: string | null, where: string) =>
    authorize(token === null ? null : `Bearer ${token}`, secrets.API_TOKENS, config.security.allow_anonymous).catch(
      () => {
        throw new AppError(401, "unauthorized", where);
      },
    );
  if (operatorKey) {
    const presented = spec.credentialOf(headers);
    await admit(
      presented,
      `This service sends its own ${spec.name} key: present one of its API tokens where your SDK puts the API key.`,
    );
    return {
      operatorKey,
      callerHash: await sha256Hex(`operator:${presented ?? ""}`),
      apply: (out) => spec.withCredential(out, operatorKey),
    };
  }
  const serviceToken = headers.get(SERVICE_TOKEN_HEADER)?.trim() ?? null;
  // The caller's own key headers, less any that carries a service token (an SDK's bearer beside
  // x-api-key, say): the service's token is this service's, never the provider's.
  const tokens = apiTokens(secrets.API_TOKENS);
  const own = new Headers();
  for (const name of spec.credentialHeaders) {
    const value = headers.get(name);
    if (value !== null && !carriesServiceToken(value, tokens)) own.set(name, value);
  }
  const presented = spec.credentialOf(own);
  await admit(
    serviceToken,
    `This service needs one of its API tokens in the ${SERVICE_TOKEN_HEADER} header; your own ${spec.name} key goes where your SDK puts it.`,
  );
  if (presented === null)
    throw new AppError(
      401,
      "unauthorized",
      `No ${spec.name} API key was sent, and this service has none of its own to send.`,
    );
  return {
    callerHash: await sha256Hex(`caller:${presented}`),
    apply: (out) => {
      // The caller's key headers pass exactly as they came (less any that carries a service token).
      for (const [name, value] of own) out.set(name, value);
    },
  };
}

/**
 * Whether a header value is one of the service's tokens, as it is or as a bearer token: such a
 * header never goes upstream, in either mode.
 */
export function carriesServiceToken(value: string, tokens: readonly string[]): boolean {
  if (tokens.length === 0) return false;
  const text = value.trim();
  const bearer = /^Bearer\s+(\S+)$/i.exec(text)?.[1];
  return tokens.includes(text) || (bearer !== undefined && tokens.includes(bearer));
}
