/** Schema validation of request bodies: a zod failure becomes a 400 listing every bad field. */
import type * as z from "zod";
import { AppError } from "./errors";

/**
 * Parses `value` with `schema` or throws 400 `invalid_request` with `details: [{path, message}]`.
 * @example const body = parseRequest(SearchRequest, await readJsonBody(c.req.raw));
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A value of the wrong type is one problem: zod may add checks that ran on it anyway (an
  // array's length check on a string), which would only mislead.
  const wrongType = new Set(
    result.error.issues.filter((issue) => issue.code === "invalid_type").map((issue) => JSON.stringify(issue.path)),
  );
  const issues = result.error.issues.filter(
    (issue) => issue.code === "invalid_type" || !wrongType.has(JSON.stringify(issue.path)),
  );
  const details = issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
    message: issue.message,
  }));
  const first = details[0];
  const where = first && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
  throw new AppError(
    400,
    "invalid_request",
    `The request is invalid (${where}${first?.message ?? "unknown error"}); see details for every bad field.`,
    { details },
  );
}
