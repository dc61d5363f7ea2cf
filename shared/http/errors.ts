/**
 * The one error type of the service. Every failure that reaches a client is an AppError rendered
 * in the api.md shape; `cause` is for logs only and is never sent.
 */
export type ErrorCode =
  | "invalid_request"
  | "invalid_json"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "embed_cap_reached"
  | "payload_too_large"
  | "image_too_large"
  | "unsupported_media_type"
  | "invalid_image"
  | "secret_in_url"
  | "blocked_private_address"
  | "host_not_found"
  | "dns_unavailable"
  | "blocked_by_policy"
  | "fetch_failed"
  | "too_large"
  | "unsupported_content"
  | "challenge_page"
  | "provider_error"
  | "no_provider"
  | "provider_timeout"
  | "config_error"
  | "stats_unavailable"
  | "internal_error";

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details?: unknown;
  /** Private: logged, never sent to a client. */
  readonly privateCause?: unknown;

  constructor(status: number, code: ErrorCode, message: string, options: { details?: unknown; cause?: unknown } = {}) {
    super(message);
    this.name = "AppError";
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.privateCause = options.cause;
  }

  toBody(): ErrorBody {
    const error: ErrorBody["error"] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { success: false, error };
  }
}

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; details?: unknown };
}

/** Upstream provider answered with a failure status or an unusable body. */
export function providerError(provider: string, what: string, cause?: unknown): AppError {
  return new AppError(
    502,
    "provider_error",
    `The ${provider} provider failed: ${what}. Try again later or configure another provider.`,
    { cause },
  );
}

/** Upstream provider did not answer within its timeout. */
export function providerTimeout(provider: string, seconds: number): AppError {
  return new AppError(
    504,
    "provider_timeout",
    `The ${provider} provider did not answer within ${seconds} s. Try again later.`,
  );
}
