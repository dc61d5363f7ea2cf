/**
 * A timer-driven abort that also follows the caller's signal: the deadline of an outbound call
 * (a provider adapter's whole exchange, the proxy's wait for its answer to start). Kept by hand
 * rather than AbortSignal.timeout so a timeout can be told apart from the caller cancelling.
 */
export class Deadline {
  readonly signal: AbortSignal;
  expired = false;
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onOuterAbort?: () => void;

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

  clear(): void {
    clearTimeout(this.timer);
    if (this.outer && this.onOuterAbort) this.outer.removeEventListener("abort", this.onOuterAbort);
  }
}
