/**
 * Schema validation of request bodies: a failure becomes a 400 listing every bad field, in our
 * words (the schema library's own wording never reaches a caller), and a field the route does not
 * take is a mistake too, named with the field meant. The HTTP routes and the MCP tools both call
 * `parseRequest`, so both answer one input with one message.
 */
import type * as z from "zod";
import { nearest } from "../nearest";
import { AppError } from "./errors";

/** One bad field: where it is (`["urls", 0]`) and what is wrong, in a sentence that names it. */
export interface FieldProblem {
  path: (string | number)[];
  message: string;
}

/**
 * Stands for the field's name in a message until the issue's whole path is known; a schema's own
 * message may use it too (`${FIELD} is not a full http or https URL`).
 */
export const FIELD = "{field}";

/**
 * Parses `value` with `schema` or throws 400 `invalid_request` with `details: [{path, message}]`.
 * @example const body = parseRequest(SearchRequest, await readJsonBody(c.req.raw));
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const unknown = unknownFields(schema, value, []);
  const result = schema.safeParse(value, { error: ourWords });
  if (result.success && unknown.length === 0) return result.data;
  const issues = result.success ? [] : result.error.issues;
  // A value of the wrong type is one problem: zod may add checks that ran on it anyway (an
  // array's length check on a string), which would only mislead. Unknown keys are named above.
  const wrongType = new Set(
    issues.filter((issue) => issue.code === "invalid_type").map((issue) => JSON.stringify(issue.path)),
  );
  const problems: FieldProblem[] = [
    ...unknown,
    ...issues
      .filter((issue) => issue.code !== "unrecognized_keys")
      .filter((issue) => issue.code === "invalid_type" || !wrongType.has(JSON.stringify(issue.path)))
      .map((issue) => {
        const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
        return { path, message: issue.message.replaceAll(FIELD, fieldName(path)) };
      }),
  ];
  const [first] = problems;
  const more = problems.length > 1 ? ` (${problems.length - 1} more in details)` : "";
  throw new AppError(400, "invalid_request", `${first?.message ?? "The request is invalid"}${more}.`, {
    details: problems,
  });
}

/**
 * A field's name as a caller writes it: `query`, `image.url`, `urls[0]`, `region[3]`.
 * @example fieldName(["urls", 0]) // "urls[0]"
 */
export function fieldName(path: readonly (string | number)[]): string {
  if (path.length === 0) return "the request body";
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}

/** The message of an issue the schema gives no words of its own, with FIELD for the field's name. */
function ourWords(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined
        ? `${FIELD} is required`
        : `${FIELD} must be ${TYPE_WORDS[issue.expected] ?? `a ${issue.expected}`}, not ${described(issue.input)}`;
    case "too_small":
    case "too_big": {
      const least = issue.code === "too_small";
      const bound = least ? issue.minimum : issue.maximum;
      if (issue.origin === "string" && least && bound === 1) return `${FIELD} must not be empty`;
      const quantity = least ? `at least ${bound}` : `at most ${bound}`;
      if (issue.origin === "string") return `${FIELD} must have ${quantity} characters`;
      if (issue.origin === "array" || issue.origin === "set") return `${FIELD} must have ${quantity} items`;
      if (issue.inclusive === false) return `${FIELD} must be ${least ? "over" : "under"} ${bound}`;
      return `${FIELD} must be ${quantity}`;
    }
    case "invalid_value":
      return `${FIELD} must be ${issue.values.length === 1 ? "" : "one of "}${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      return `${FIELD} must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `${FIELD} must be a multiple of ${String(issue.divisor)}`;
    case "invalid_union":
      return `${FIELD} matches none of the forms this route takes; GET /openapi.json describes them`;
    default:
      return `${FIELD} is invalid`;
  }
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  tuple: "a list",
  object: "an object",
};

/** What a caller sent, in a few words (never the value itself when it is text: it may be long or private). */
function described(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "a list";
  if (typeof input === "number" || typeof input === "boolean") return String(input);
  if (typeof input === "string") return "a string";
  return `${typeof input === "object" ? "an" : "a"} ${typeof input}`;
}

/**
 * The fields of `value` that `schema` does not take, with the field meant when one is a letter or
 * two off (`maxAge` → `max_age`). Walks the schema, not the value: only as deep as the schema goes.
 */
function unknownFields(schema: z.ZodType, value: unknown, path: (string | number)[]): FieldProblem[] {
  const def = inner(schema)._zod.def as unknown as SchemaDef;
  if (def.type === "array" && Array.isArray(value) && def.element)
    return value.flatMap((item, i) => unknownFields(def.element!, item, [...path, i]));
  if (def.type === "tuple" && Array.isArray(value) && def.items)
    return def.items.flatMap((item, i) => (i < value.length ? unknownFields(item, value[i], [...path, i]) : []));
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const record = value as Record<string, unknown>;
  if (def.type === "union" && def.options) {
    // The form the caller meant: the one that takes most of the fields sent.
    const taken = (option: z.ZodType) => {
      const shape = shapeOf(option);
      return shape ? Object.keys(record).filter((key) => Object.hasOwn(shape, key)).length : -1;
    };
    const meant = def.options.reduce((best, option) => (taken(option) > taken(best) ? option : best));
    return unknownFields(meant, value, path);
  }
  const shape = shapeOf(schema);
  if (!shape) return [];
  const names = Object.keys(shape);
  const loose = def.catchall !== undefined && (def.catchall._zod.def as unknown as SchemaDef).type !== "never";
  return Object.entries(record).flatMap(([key, field]): FieldProblem[] => {
    // A field's value that is not an object or array has no fields of its own to check.
    if (Object.hasOwn(shape, key))
      return field === null || typeof field !== "object" ? [] : unknownFields(shape[key]!, field, [...path, key]);
    if (loose) return [];
    const meant =
      nearest(key, names, 2) ??
      nearest(
        key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
        names,
        1,
      );
    const where = fieldName([...path, key]);
    const hint = meant ? ` (did you mean ${fieldName([...path, meant])}?)` : `; it takes ${names.join(", ")}`;
    return [{ path: [...path, key], message: `${where} is not a field of this request${hint}` }];
  });
}

/** The parts of a zod definition the walk reads. */
interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  items?: z.ZodType[];
  options?: z.ZodType[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
}

/** The schema under its wrappers (optional, default, a preprocess or transform around it). */
function inner(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let depth = 0; depth < 16; depth++) {
    const def = current._zod.def as unknown as SchemaDef;
    if (def.innerType) current = def.innerType;
    else if (def.type === "pipe" && def.in && def.out)
      current = (def.in._zod.def as unknown as SchemaDef).type === "transform" ? def.out : def.in;
    else break;
  }
  return current;
}

/** The fields an object schema takes, or null when it is no object. */
function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | null {
  const def = inner(schema)._zod.def as unknown as SchemaDef;
  return def.type === "object" && def.shape ? def.shape : null;
}
