/**
 * Per-key queues of operations in one process: an operation on a key starts once the previous
 * one on that key has settled, so a read-modify-write on one counter never interleaves with
 * another in the same process. A key whose queue has emptied is forgotten.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /**
   * Runs `work` after every operation queued on `key` before it; its failure is its caller's alone.
   * @example await queue.run(sessionId, () => reserveSlot(store, imageKey, cap));
   */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => this.tails.get(key) === tail && this.tails.delete(key));
    return result;
  }
}
