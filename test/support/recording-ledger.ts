/**
 * The real ledger buffer (shared/stats/ledger.ts) over a store that keeps the rows it is handed in
 * memory, for tests that read what one app recorded without the other tests' counts: every
 * rule of the buffer (bounded names, "(failed)" until an answer confirms a model, whole counts)
 * applies. `flush()` hands the gathered rows over; `sum` reads what was handed (the ledger's own
 * rows, not the per-session copies).
 */
import type { LedgerRow, LedgerStore } from "../../shared/ports";
import { consoleLogger } from "../../shared/log";
import { LedgerBuffer } from "../../shared/stats/ledger";

export interface RecordingLedger {
  ledger: LedgerBuffer;
  /** Rows written so far (after a flush). */
  rows: LedgerRow[];
  /** Writes what the buffer gathered. */
  flush(): Promise<void>;
  /** One counter summed over the written rows (a session's copy of the LLM's rows left out). */
  sum(counter: string): number;
  /** Every counter summed over the written rows (a session's copy of the LLM's rows left out). */
  totals(): Record<string, number>;
}

export function recordingLedger(): RecordingLedger {
  const rows: LedgerRow[] = [];
  const store: LedgerStore = {
    add: async (batch) => void rows.push(...batch.map((row) => ({ ...row }))),
    report: () => Promise.reject(new Error("a recording ledger is not read through /v1/stats")),
    sessions: () => Promise.reject(new Error("a recording ledger is not read through /v1/stats/sessions")),
  };
  const ledger = new LedgerBuffer(store, consoleLogger);
  const totals = () => {
    const sum: Record<string, number> = {};
    // The ledger writes each LLM count twice, once under its session (GET /v1/stats/sessions).
    for (const row of rows) if (row.session === undefined) sum[row.counter] = (sum[row.counter] ?? 0) + row.value;
    return sum;
  };
  return { ledger, rows, flush: () => ledger.flush(), sum: (counter) => totals()[counter] ?? 0, totals };
}
