/** Read-only values shared between requests. */

/**
 * `value` and everything in it made read-only (a JSON-like value: plain objects and arrays,
 * acyclic), so one reader cannot change what the next one reads.
 * @example deepFreeze({ results: [{ url: "https://example.com" }] })
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
