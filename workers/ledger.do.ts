/**
 * LedgerDO: the savings ledger's buckets on Workers, one object (named "ledger") with SQLite
 * storage. Each batch is one transaction of upserts that add to the counters, so concurrent
 * batches from many isolates never lose an increment; buckets older than 35 days are deleted as
 * batches arrive (docs/storage.md). `/v1/stats` is summed here, row by row from the cursor, and
 * only its answer goes back to the Worker.
 */
import { DurableObject } from "cloudflare:workers";
import type { LedgerRow, StatsRequest } from "../shared/ports";
import { BucketNames, hourOf, LEDGER_RETENTION_MS } from "../shared/stats/ledger";
import type { StatsResponse } from "../shared/stats/stats.schema";
import { type KeptNames, NameRanking, StatsFold, statsWindow } from "../shared/stats/stats.service";

/** The one object's name. */
export const LEDGER_OBJECT = "ledger";

export class LedgerDO extends DurableObject<Record<string, never>> {
  /** This object is the ledger's one writer, so the names it has seen are the names it holds. */
  private readonly names = new BucketNames();

  constructor(ctx: DurableObjectState, env: Record<string, never>) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS ledger (hour INTEGER NOT NULL, tool TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, counter TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (hour, tool, provider, model, counter)) WITHOUT ROWID",
    );
  }

  add(batch: readonly LedgerRow[]): void {
    const sql = this.ctx.storage.sql;
    for (const { hour, tool } of this.names.unloaded(batch))
      this.names.load(
        hour,
        tool,
        sql
          .exec<{ model: string }>("SELECT DISTINCT model FROM ledger WHERE hour = ? AND tool = ?", hour, tool)
          .toArray()
          .map((row) => row.model),
      );
    const rows = this.names.cap(batch);
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

  report(request: StatsRequest): StatsResponse {
    const sql = this.ctx.storage.sql;
    const { from, to } = statsWindow(request.window, request.now);
    const fold = new StatsFold(request, this.keptNames(request, from, to));
    const rows = sql.exec<{
      hour: number;
      tool: LedgerRow["tool"];
      provider: string;
      model: string;
      counter: string;
      value: number;
    }>("SELECT hour, tool, provider, model, counter, value FROM ledger WHERE hour >= ? AND hour < ?", from, to);
    for (const row of rows) fold.add(row);
    return fold.answer();
  }

  /** The names `report` keeps apart: the window's requests summed per name here, then ranked. */
  private keptNames(request: StatsRequest, from: number, to: number): KeptNames {
    const ranking = new NameRanking(request);
    const perName = this.ctx.storage.sql.exec<{ tool: LedgerRow["tool"]; model: string; value: number }>(
      "SELECT tool, model, SUM(CASE WHEN counter = 'requests' THEN value ELSE 0 END) AS value FROM ledger WHERE hour >= ? AND hour < ? AND tool IN ('llm', 'evict') GROUP BY tool, model",
      from,
      to,
    );
    for (const { tool, model, value } of perName)
      ranking.add({ hour: from, tool, provider: "", model, counter: "requests", value });
    return ranking.kept();
  }
}
