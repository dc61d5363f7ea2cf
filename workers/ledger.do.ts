/**
 * LedgerDO: the savings ledger's buckets on Workers, one object (named "ledger") with SQLite
 * storage. Each batch is one transaction of upserts that add to the counters, so concurrent
 * batches from many isolates never lose an increment; buckets older than 35 days are deleted as
 * batches arrive (docs/storage.md). `/v1/stats` is summed here, row by row from the cursor, and
 * only its answer goes back to the Worker. A session's rows (`LedgerRow.session`) are a table of
 * their own, `ledger_sessions`, read by `/v1/stats/sessions` only.
 */
import { DurableObject } from "cloudflare:workers";
import type { LedgerRow, StatsRequest } from "../shared/ports";
import { counterCombine } from "../shared/stats/counters";
import { BucketNames, hourOf, LEDGER_RETENTION_MS } from "../shared/stats/ledger";
import { SessionsFold } from "../shared/stats/sessions.service";
import type { SessionsResponse, StatsResponse } from "../shared/stats/stats.schema";
import { type KeptNames, NameRanking, StatsFold, statsWindow } from "../shared/stats/stats.service";

/** The one object's name. */
export const LEDGER_OBJECT = "ledger";

export class LedgerDO extends DurableObject<Record<string, never>> {
  /** This object is the ledger's one writer, so the names it has seen are the names it holds. */
  private readonly names = new BucketNames();
  /** The sessions of each hour, bounded the same way (LEDGER_SESSIONS_PER_HOUR). */
  private readonly sessionNames = new BucketNames({ dimension: "session" });

  constructor(ctx: DurableObjectState, env: Record<string, never>) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS ledger (hour INTEGER NOT NULL, tool TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, counter TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (hour, tool, provider, model, counter)) WITHOUT ROWID",
    );
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS ledger_sessions (hour INTEGER NOT NULL, session TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, counter TEXT NOT NULL, value INTEGER NOT NULL, PRIMARY KEY (hour, session, provider, model, counter)) WITHOUT ROWID",
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
    // Sessions are counted under the llm tool only.
    for (const { hour } of this.sessionNames.unloaded(batch))
      this.sessionNames.load(
        hour,
        "llm",
        sql
          .exec<{ session: string }>("SELECT DISTINCT session FROM ledger_sessions WHERE hour = ?", hour)
          .toArray()
          .map((row) => row.session),
      );
    const rows = this.sessionNames.cap(this.names.cap(batch));
    this.ctx.storage.transactionSync(() => {
      for (const row of rows) {
        if (row.session !== undefined) {
          const how = counterCombine(row.counter);
          const combined = how === "sum" ? "value + excluded.value" : `${how.toUpperCase()}(value, excluded.value)`;
          sql.exec(
            `INSERT INTO ledger_sessions (hour, session, provider, model, counter, value) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hour, session, provider, model, counter) DO UPDATE SET value = ${combined}`,
            row.hour,
            row.session,
            row.provider,
            row.model,
            row.counter,
            row.value,
          );
          continue;
        }
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
      const cutoff = hourOf(Date.now() - LEDGER_RETENTION_MS);
      sql.exec("DELETE FROM ledger WHERE hour < ?", cutoff);
      sql.exec("DELETE FROM ledger_sessions WHERE hour < ?", cutoff);
    });
  }

  /**
   * The sessions of the window, folded hour by hour as Deno KV folds them: the as-sent rule for
   * hours counted before the as-sent counters is per hour (docs/stats.md, "Sessions"), so a
   * session's counters summed over the window would answer another figure. A row is already one
   * (hour, session, provider, model, counter): the primary key, whose order (hour first) the
   * fold takes them in.
   */
  sessions(request: StatsRequest): SessionsResponse {
    const { from, to } = statsWindow(request.window, request.now);
    const fold = new SessionsFold(request);
    const rows = this.ctx.storage.sql.exec<{
      hour: number;
      session: string;
      provider: string;
      model: string;
      counter: string;
      value: number;
    }>(
      "SELECT hour, session, provider, model, counter, value FROM ledger_sessions WHERE hour >= ? AND hour < ? ORDER BY hour",
      from,
      to,
    );
    for (const row of rows) fold.add({ tool: "llm", ...row });
    return fold.answer();
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
