/**
 * Several processes on one local Deno KV file contend for its SQLite lock, and Deno KV reports a
 * lost race as an error ("database is locked") instead of waiting. Every Deno KV call of the
 * adapters goes through `whenUnlocked`, which retries those (and only those) for a bounded time.
 */

import { retryJittered } from "./retry";

/** Longest a call keeps retrying a locked database before the error goes to the caller. */
const BUSY_BUDGET_MS = 5_000;

const isLocked = (error: unknown) => error instanceof Error && /database is locked|SQLITE_BUSY/i.test(error.message);

/**
 * Runs a Deno KV call, again after a short random pause while the database is locked.
 * @example const entry = await whenUnlocked(() => kv.get(["cache", key]));
 */
export function whenUnlocked<T>(call: () => Promise<T>): Promise<T> {
  return retryJittered(call, {
    retryable: isLocked,
    maxPauseMs: (attempt) => Math.min(50, 2 * attempt),
    budgetMs: BUSY_BUDGET_MS,
  });
}
