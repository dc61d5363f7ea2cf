/** The bindings and variables the Workers runtime hands the service (see wrangler.toml). */
import type { FlightDO } from "./flight.do";
import type { LedgerDO } from "./ledger.do";
import type { SessionDO } from "./session.do";

export interface WorkerEnv {
  CACHE: KVNamespace;
  FLIGHT: DurableObjectNamespace<FlightDO>;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  /** The savings ledger's buckets (one object). */
  LEDGER: DurableObjectNamespace<LedgerDO>;
  /** Optional: Workers Analytics Engine also takes the ledger's writes. */
  LEDGER_ANALYTICS?: AnalyticsEngineDataset;
  [name: string]: unknown;
}
