/**
 * How many callers of one web_search or web_extract wait in its FlightDO: the flight key made by
 * the service's own functions from the test environment (test/support/flight-keys.ts), asked of
 * the object by RPC. For `answeredTogether` (test/support/emulator-client.ts), which holds the
 * provider's answer until every concurrent caller joined.
 */
import { CONFIG_PLACES, loadConfig } from "../../shared/config/config.load";
import { workersDeps } from "../../workers/deps";
import { extractFlightKey, searchFlightKey } from "../support/flight-keys";
import { testEnv } from "./helpers";

const configWith = (vars: Record<string, unknown>) => loadConfig({ ...testEnv, ...vars }, CONFIG_PLACES.workers);

/** Callers of `POST /v1/web_search {query, limit}` (limit 5 by default) waiting on the one paying. */
export async function searchJoiners(query: string, limit = 5, vars: Record<string, unknown> = {}): Promise<number> {
  return workersDeps(testEnv).flight.joiners(await searchFlightKey(configWith(vars), query, limit));
}

/** Callers of `POST /v1/web_extract` for `url` (markdown) waiting on the one paying. */
export async function extractJoiners(url: string, vars: Record<string, unknown> = {}): Promise<number> {
  return workersDeps(testEnv).flight.joiners(await extractFlightKey(configWith(vars), url));
}
