/**
 * The gate's refusals in one shape: every refusal is an AppError; `toRefusal` tells a refusal
 * (which a route reports, in-band or as its status) from a bug (which it rethrows).
 */
import { AppError } from "../http/errors";

export type FetchLimitCode = "too_large" | "unsupported_content";

/** A fetched body over the byte limit (413), or of a content type the caller does not read (415). */
export class FetchLimitError extends AppError {
  declare readonly code: FetchLimitCode;

  constructor(status: 413 | 415, code: FetchLimitCode, message: string, options: { cause?: unknown } = {}) {
    super(status, code, message, options);
    this.name = "FetchLimitError";
  }
}

/** Every code the gate and the safe fetch can refuse with. */
export type RefusalCode =
  | "secret_in_url"
  | "invalid_request"
  | "blocked_private_address"
  | "host_not_found"
  | "dns_unavailable"
  | "blocked_by_policy"
  | "fetch_failed"
  | FetchLimitCode;

export interface Refusal {
  /** Suggested HTTP status when the refusal ends the call (vision): 422, 400, 403, 503, 502, 413, 415. */
  status: number;
  code: RefusalCode;
  /** One sentence, safe to send: no URL query, no secret, no upstream body. */
  message: string;
}

const REFUSAL_CODES = new Set<string>([
  "secret_in_url",
  "invalid_request",
  "blocked_private_address",
  "host_not_found",
  "dns_unavailable",
  "blocked_by_policy",
  "fetch_failed",
  "too_large",
  "unsupported_content",
]);

/**
 * Turn an error thrown by the gate or safeFetch into a refusal for an in-band `error` object
 * (web_extract) or a status (vision). Returns null for anything else: that is a bug, rethrow it.
 *
 * @example
 * try { await safeFetch(url, opts) } catch (e) {
 *   const r = toRefusal(e); if (!r) throw e;
 *   results.push({ url, error: { code: r.code, message: r.message } });
 * }
 */
export function toRefusal(error: unknown): Refusal | null {
  if (error instanceof AppError && REFUSAL_CODES.has(error.code)) {
    return { status: error.status, code: error.code as RefusalCode, message: error.message };
  }
  return null;
}
