/**
 * Retrying a call that lost a race (a locked database, a check-and-set beaten by another writer)
 * after a short random pause, so contenders spread out instead of colliding again in step.
 */

export interface RetryPolicy {
  /** Whether `error` is a lost race worth another attempt (anything else goes to the caller). */
  retryable(error: unknown): boolean;
  /** The longest pause before attempt `attempt + 1` (the pause is random below it). */
  maxPauseMs(attempt: number): number;
  /** Give up (throw the last error) after this many attempts or past this time, whichever comes first. */
  maxAttempts?: number;
  budgetMs?: number;
}

/**
 * Runs `call` until it succeeds, throws what `policy` does not retry, or runs out of attempts or time.
 * @example await retryJittered(() => kv.get(key), { retryable: isLocked, maxPauseMs: (n) => Math.min(50, 2 * n), budgetMs: 5000 });
 */
export async function retryJittered<T>(call: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const deadline = policy.budgetMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + policy.budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (
        !policy.retryable(error) ||
        attempt >= (policy.maxAttempts ?? Number.POSITIVE_INFINITY) ||
        Date.now() > deadline
      )
        throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * policy.maxPauseMs(attempt)));
    }
  }
}
