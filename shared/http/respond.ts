/** JSON responses in the api.md shape, with the charset the contract names. */
import type { AppError, ErrorBody } from "./errors";

export const JSON_TYPE = "application/json; charset=utf-8";

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": JSON_TYPE, ...headers } });
}

export function errorResponse(error: AppError, headers: Record<string, string> = {}): Response {
  const body: ErrorBody = error.toBody();
  return jsonResponse(body, error.status, headers);
}
