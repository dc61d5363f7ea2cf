/** The bindings and variables the Workers runtime hands the service (see wrangler.toml). */
import type { FlightDO } from "./flight.do";

export interface WorkerEnv {
  CACHE: KVNamespace;
  FLIGHT: DurableObjectNamespace<FlightDO>;
  [name: string]: unknown;
}
