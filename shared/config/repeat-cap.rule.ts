/**
 * Which repeat cap applies to whom (docs/vision.md, "The repeat cap"), in numbers and in words.
 * Imports nothing, so the configuration's public view can state the rule the 409 states.
 */
export type Caller = "main" | "subagent";

/** The cap when `vision.max_calls_per_image` is unset and the caller is a subagent. */
export const DEFAULT_SUBAGENT_CAP = 3;

/**
 * The cap that applies, or null for unlimited.
 * @example effectiveCap(null, "subagent") // 3
 * @example effectiveCap(0, "subagent")    // null (0 = unlimited)
 */
export function effectiveCap(configured: number | null, caller: Caller): number | null {
  if (configured === null) return caller === "subagent" ? DEFAULT_SUBAGENT_CAP : null;
  return configured === 0 ? null : configured;
}

/**
 * `vision.max_calls_per_image` in words, as `GET /v1/config` shows it.
 * @example capRule(null) // "unset: 3 for subagents, unlimited for the main agent; 0 = unlimited"
 */
export function capRule(configured: number | null): string {
  if (configured === null)
    return `unset: ${DEFAULT_SUBAGENT_CAP} for subagents, unlimited for the main agent; 0 = unlimited`;
  return configured === 0 ? "0 = unlimited" : `${configured} for every caller; 0 = unlimited`;
}

/**
 * The setting as the 409 ends with it, in agreement with the value `GET /v1/config` shows for the
 * key: its number when set, else `unset` and the default that applied (the key itself reads null).
 * @example capSetting(null) // "vision.max_calls_per_image unset: 3 for subagents; 0 = unlimited"
 * @example capSetting(5)    // "vision.max_calls_per_image = 5; 0 = unlimited"
 */
export function capSetting(configured: number | null): string {
  return configured === null
    ? `vision.max_calls_per_image unset: ${DEFAULT_SUBAGENT_CAP} for subagents; 0 = unlimited`
    : `vision.max_calls_per_image = ${configured}; 0 = unlimited`;
}
