/**
 * Whether a proxied request retires old text tool results (docs/proxy.md, "Old tool results"):
 * `proxy.retire_tool_results`, unless the request's `X-Edge-Retire-Tool-Results` says otherwise
 * (`off` wins over the configuration, `on` turns it on for that request). Any other value is the
 * caller's mistake, refused before anything is sent.
 */
import { AppError } from "../http/errors";

/** The request header that turns text tool-result retirement on or off for one request. */
export const RETIRE_TOOL_RESULTS_HEADER = "x-edge-retire-tool-results";

/**
 * The request's choice over the configuration's.
 * @example retiresToolResults(new Headers({ "x-edge-retire-tool-results": "off" }), true) // false
 */
export function retiresToolResults(headers: Headers, configured: boolean): boolean {
  const given = headers.get(RETIRE_TOOL_RESULTS_HEADER);
  if (given === null) return configured;
  const value = given.trim().toLowerCase();
  if (value === "on") return true;
  if (value === "off") return false;
  throw new AppError(
    400,
    "invalid_request",
    `X-Edge-Retire-Tool-Results takes "on" or "off"; got ${JSON.stringify(given.slice(0, 20))}.`,
  );
}
