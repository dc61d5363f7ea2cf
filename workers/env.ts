/** The bindings and variables the Workers runtime hands the service (see wrangler.toml). */
import type { FlightDO } from "./flight.do";
import type { SessionDO } from "./session.do";

export interface WorkerEnv {
  CACHE: KVNamespace;
  FLIGHT: DurableObjectNamespace<FlightDO>;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  [name: string]: unknown;
}
