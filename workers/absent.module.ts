/**
 * Stands in, in the Worker bundle (wrangler.toml `[alias]`), for modules that are imported but never
 * run there: Ajv with ajv-formats (the MCP SDK's default validator, replaced by
 * `@cfworker/json-schema` because Ajv compiles with `new Function`). Calling
 * or constructing it throws, so a path that did reach one would fail loudly, not silently.
 */
export default function absentModule(): never {
  throw new Error(
    "This module is left out of the Worker bundle (wrangler.toml [alias]); nothing in the Worker should call it.",
  );
}
