/**
 * The gate's refusals in one shape. Most are AppErrors; `too_large` and `unsupported_content` are
 * in-band codes of api.md that the shared ErrorCode union does not list yet, so they travel as a
 * small FetchLimitError with the same fields until it does.
 */
import { AppError } from "../http/errors";

export type FetchLimitCode = "too_large" | "unsupported_content";

/** A fetched body over the byte limit, or of a content type the caller does not read. */
export class FetchLimitError extends Error {
  readonly status: number;
  readonly code: FetchLimitCode;
  /** Private: logged, never sent to a client. */
  readonly privateCause?: unknown;

  constructor(status: number, code: FetchLimitCode, message: string, options: { cause?: unknown } = {}) {
    super(message);
    this.name = "FetchLimitError";
    this.status = status;
    this.code = code;
    this.privateCause = options.cause;
  }
}

/** Every code the gate and the safe fetch can refuse with. */
export type RefusalCode =
  | "secret_in_url"
  | "invalid_request"
  | "blocked_private_address"
  | "blocked_by_policy"
  | "fetch_failed"
  | FetchLimitCode;

export interface Refusal {
  /** Suggested HTTP status when the refusal ends the call (vision): 422, 400, 403, 502, 413, 415. */
  status: number;
  code: RefusalCode;
  /** One sentence, safe to send: no URL query, no secret, no upstream body. */
  message: string;
}

const REFUSAL_CODES = new Set<string>([
  "secret_in_url",
  "invalid_request",
  "blocked_private_address",
  "blocked_by_policy",
  "fetch_failed",
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
  if (error instanceof FetchLimitError) return { status: error.status, code: error.code, message: error.message };
  if (error instanceof AppError && REFUSAL_CODES.has(error.code)) {
    return { status: error.status, code: error.code as RefusalCode, message: error.message };
  }
  return null;
}
