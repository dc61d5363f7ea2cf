/**
 * JSON Schema of a tool's zod schemas, in the one form MCP `tools/list` and OpenAPI both show.
 * The form is "portable": valid under draft-07 and 2020-12 alike, because MCP clients validate
 * with either (the SDK's Ajv default is draft-07; OpenAPI 3.1 and the Inspector use 2020-12).
 */
import * as z from "zod";

type JsonSchema = Record<string, unknown>;

/**
 * The schema of `schema` as a client sends it (`io: "input"`) or receives it (`"output"`).
 * @example toJsonSchema(SearchRequest, "input").properties.query.maxLength // 2048
 */
export function toJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  delete generated.$schema;
  return portable(generated) as JsonSchema;
}

/**
 * MCP requires `type: "object"` at the root of `inputSchema` and `outputSchema`; a union of
 * objects (vision's two paths) gets it next to its `anyOf`.
 */
export function toObjectJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = toJsonSchema(schema, io);
  return json.type === "object" ? json : { type: "object", ...json };
}

/**
 * Drops the safe-integer bounds zod adds to integers, and rewrites the 2020-12-only tuple form (`prefixItems` + `items: false`) that zod emits for
 * `z.tuple` into `items` + `minItems`/`maxItems`, which both drafts read the same way (positions
 * of different types become an `anyOf` of them: looser, never stricter). Walks our
 * own generated schema, never caller data.
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (node === null || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) out[key] = portable(value);
  // zod writes the safe-integer range on every `.int()`; for a clamped or bounded field it is
  // noise a caller would read as the accepted range.
  if (out.type === "integer") {
    if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
    if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  }
  const tuple = out.prefixItems;
  if (Array.isArray(tuple) && out.items === false) {
    delete out.prefixItems;
    const distinct = [...new Map(tuple.map((item) => [JSON.stringify(item), item])).values()];
    out.items = distinct.length === 1 ? distinct[0] : { anyOf: distinct };
    out.minItems = tuple.length;
    out.maxItems = tuple.length;
  }
  return out;
}
