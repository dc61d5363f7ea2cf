/**
 * A timer-driven abort that also follows the caller's signal: the one deadline of every bounded
 * wait (a provider adapter's whole exchange, the proxy's wait for its answer to start, a fetch of a
 * caller's URL with its redirects, a DNS lookup, draining a body). Kept by hand rather than
 * AbortSignal.timeout so a timeout can be told apart from the caller cancelling.
 */
export class Deadline {
  readonly signal: AbortSignal;
  expired = false;
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onOuterAbort?: () => void;
  private expiry?: Promise<never>;

  constructor(
    ms: number,
    private readonly outer?: AbortSignal,
  ) {
    this.signal = this.controller.signal;
    this.timer = setTimeout(
      () => {
        this.expired = true;
        this.controller.abort(new DOMException("deadline passed", "TimeoutError"));
      },
      Math.max(1, ms),
    );
    if (outer) {
      if (outer.aborted) this.controller.abort(outer.reason);
      this.onOuterAbort = () => this.controller.abort(outer.reason);
      outer.addEventListener("abort", this.onOuterAbort, { once: true });
    }
  }

  /** `work`, or its rejection with the abort reason once the deadline passes (or the outer signal aborts). */
  within<T>(work: Promise<T>): Promise<T> {
    if (!this.expiry) {
      this.expiry = new Promise<never>((_, reject) => {
        if (this.signal.aborted) reject(this.signal.reason);
        else this.signal.addEventListener("abort", () => reject(this.signal.reason), { once: true });
      });
      this.expiry.catch(() => undefined); // rejects whether or not a race still awaits it
    }
    return Promise.race([work, this.expiry]);
  }

  /**
   * `work`, or `late` once the deadline passes; any other failure rejects as it did.
   * @example const outcome = await deadline.orLate(lookup, "timeout" as const);
   */
  async orLate<T, L>(work: Promise<T>, late: L): Promise<T | L> {
    try {
      return await this.within(work);
    } catch (error) {
      if (this.expired) return late;
      throw error;
    }
  }

  clear(): void {
    clearTimeout(this.timer);
    if (this.outer && this.onOuterAbort) this.outer.removeEventListener("abort", this.onOuterAbort);
  }
}
