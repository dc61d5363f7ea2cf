/** JSON responses in the api.md shape, with the charset the contract names. */
import type { AppError, ErrorBody } from "./errors";

export const JSON_TYPE = "application/json; charset=utf-8";

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(jsonText(body), { status, headers: { "content-type": JSON_TYPE, ...headers } });
}

/** The JSON of frozen bodies already written: a body shared by repeats is written once. */
const texts = new WeakMap<object, string>();

/** `JSON.stringify(body)`, once per frozen body (it cannot change). */
function jsonText(body: unknown): string {
  if (typeof body !== "object" || body === null || !Object.isFrozen(body)) return JSON.stringify(body);
  let text = texts.get(body);
  if (text === undefined) texts.set(body, (text = JSON.stringify(body)));
  return text;
}

export function errorResponse(error: AppError, headers: Record<string, string> = {}): Response {
  const body: ErrorBody = error.toBody();
  return jsonResponse(body, error.status, headers);
}
