/**
 * Reading request bodies safely: size limit before parsing, content-type check, strict UTF-8,
 * JSON, and well-formed Unicode in every string, so bad input is a clear 4xx and never a crash
 * further down.
 */
import { readAtMost } from "../bytes";
import { AppError } from "./errors";

export const MiB = 1024 * 1024;

/** Body limits per route (api.md): 1 MiB by default. */
export const BODY_LIMITS = {
  default: 1 * MiB,
  vision: 34 * MiB,
  evict: 64 * MiB,
} as const;

const tooLarge = (limit: number) =>
  new AppError(413, "payload_too_large", `The request body is larger than ${formatBytes(limit)}; send a smaller body.`);

/**
 * Reads at most `limit` bytes of the body; refuses with 413 as soon as the declared length or the
 * bytes read pass it, without buffering the rest.
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  return readAtMost(request.body, limit, () => tooLarge(limit));
}

/** True when the Content-Type is JSON (`application/json`, any parameters, any case). */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/**
 * Reads a JSON request body within `limit` bytes.
 * @throws 415 for another content type, 413 over the limit, 400 `invalid_json` for bytes that are
 * not UTF-8 or not JSON, 400 `invalid_request` for a string that is not well-formed Unicode.
 */
export async function readJsonBody(request: Request, limit: number = BODY_LIMITS.default): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new AppError(415, "unsupported_media_type", "Send the request body as JSON with the header Content-Type: application/json.");
  }
  const bytes = await readBodyBytes(request, limit);
  return parseJsonBytes(bytes);
}

/** Strict UTF-8 decode + JSON.parse + Unicode check. */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new AppError(400, "invalid_json", "The request body is not valid UTF-8; send UTF-8 encoded JSON.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message.slice(0, 120) : "parse error";
    throw new AppError(400, "invalid_json", `The request body is not valid JSON (${detail}); send a JSON object.`);
  }
  const badPath = findIllFormedString(value, []);
  if (badPath) {
    throw new AppError(400, "invalid_request", `The string at ${badPath.join(".") || "(root)"} is not well-formed Unicode (a lone surrogate); send valid text.`, {
      details: [{ path: badPath, message: "lone surrogate" }],
    });
  }
  return value;
}

/** Path of the first string (value or key) with a lone surrogate, or null. */
function findIllFormedString(value: unknown, path: (string | number)[]): (string | number)[] | null {
  if (typeof value === "string") return value.isWellFormed() ? null : path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findIllFormedString(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      if (!key.isWellFormed()) return [...path, key.toWellFormed()];
      const found = findIllFormedString(child, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

export function formatBytes(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}
