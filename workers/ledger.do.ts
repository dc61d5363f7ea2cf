/**
 * LedgerDO: the savings ledger's buckets on Workers, one object (named "ledger") with SQLite
 * storage. Each batch is one transaction of upserts that add to the counters, so concurrent
 * batches from many isolates never lose an increment; buckets older than 35 days are deleted as
 * batches arrive (docs/storage.md).
 */
import { DurableObject } from "cloudflare:workers";
import type { LedgerRow } from "../shared/ports";
import { hourOf, LEDGER_RETENTION_MS } from "../shared/stats/ledger";

/** The one object's name. */
export const LEDGER_OBJECT = "ledger";

export class LedgerDO extends DurableObject<Record<string, never>> {
  constructor(ctx: DurableObjectState, env: Record<string, never>) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS ledger (hour INTEGER NOT NULL, tool TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, counter TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (hour, tool, provider, model, counter)) WITHOUT ROWID",
    );
  }

  add(rows: readonly LedgerRow[]): void {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      for (const row of rows) {
        sql.exec(
          "INSERT INTO ledger (hour, tool, provider, model, counter, value) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hour, tool, provider, model, counter) DO UPDATE SET value = value + excluded.value",
          row.hour,
          row.tool,
          row.provider,
          row.model,
          row.counter,
          row.value,
        );
      }
      sql.exec("DELETE FROM ledger WHERE hour < ?", hourOf(Date.now() - LEDGER_RETENTION_MS));
    });
  }

  read(fromHour: number, toHour: number): LedgerRow[] {
    return this.ctx.storage.sql
      .exec<{ hour: number; tool: LedgerRow["tool"]; provider: string; model: string; counter: string; value: number }>(
        "SELECT hour, tool, provider, model, counter, value FROM ledger WHERE hour >= ? AND hour < ?",
        fromHour,
        toHour,
      )
      .toArray();
  }
}
