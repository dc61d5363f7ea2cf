/**
 * afterResponseLogger's lines logged while a request is in flight (shared/log.ts, `after`): written
 * LOG_GATHER_MS after a response is handed over, the timer set then and not on the request's path;
 * at the latest LOG_HOLD_MS later when none is; a line logged with no request in flight
 * LOG_GATHER_MS later, as before.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { afterResponseLogger, LOG_GATHER_MS, LOG_HOLD_MS, type LogWrite } from "../../shared/log";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A logger writing into an array, and a request in flight whose response can be handed over. */
function setUp() {
  const written: Array<[string, string]> = [];
  const write: LogWrite = (method, text) => void written.push([method, text]);
  const log = afterResponseLogger(write);
  const request = () => {
    let handOver!: () => void;
    log.after(new Promise<void>((resolve) => (handOver = resolve)));
    return { handOver };
  };
  const lines = () => written.flatMap(([method, text]) => text.split("\n").map((line) => [method, JSON.parse(line)]));
  return { log, written, request, lines };
}

describe("afterResponseLogger with requests in flight", () => {
  it("writes a request's lines LOG_GATHER_MS after its response is handed over, in order, one write per level run", async () => {
    const { log, written, request, lines } = setUp();
    const { handOver } = request();
    log.info("request", { n: 1 });
    log.warn("request", { n: 2 });
    log.info("request", { n: 3 });
    handOver();
    await Promise.resolve();
    await Promise.resolve();
    expect(written).toEqual([]);
    vi.advanceTimersByTime(LOG_GATHER_MS);
    expect(written.map(([method]) => method)).toEqual(["log", "warn", "log"]);
    expect(lines()).toEqual([
      ["log", { level: "info", event: "request", n: 1 }],
      ["warn", { level: "warn", event: "request", n: 2 }],
      ["log", { level: "info", event: "request", n: 3 }],
    ]);
  });

  it("sets no timer on a request's path once one waits for a response (the next second's requests)", async () => {
    const { log, written, request } = setUp();
    for (let n = 1; n <= 3; n++) {
      const { handOver } = request();
      const before = vi.getTimerCount();
      log.info("request", { n });
      // The first line sets the one LOG_HOLD_MS timer; the next requests' lines set none.
      expect(vi.getTimerCount()).toBe(n === 1 ? before + 1 : before);
      handOver();
      await Promise.resolve();
      await Promise.resolve();
      vi.advanceTimersByTime(LOG_GATHER_MS);
      expect(written).toHaveLength(n);
    }
  });

  it("writes the lines of a response not handed over yet (a long stream) at the latest LOG_HOLD_MS later", () => {
    const { log, written, request, lines } = setUp();
    request();
    log.info("request", { route: "/openai/v1/chat/completions" });
    vi.advanceTimersByTime(LOG_GATHER_MS);
    expect(written).toEqual([]);
    vi.advanceTimersByTime(LOG_HOLD_MS - LOG_GATHER_MS);
    expect(lines()).toEqual([["log", { level: "info", event: "request", route: "/openai/v1/chat/completions" }]]);
  });

  it("writes a line logged with no request in flight LOG_GATHER_MS later, and a failed hand-over drains too", async () => {
    const { log, written, lines } = setUp();
    log.error("background", { n: 1 });
    vi.advanceTimersByTime(LOG_GATHER_MS - 1);
    expect(written).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(lines()).toEqual([["error", { level: "error", event: "background", n: 1 }]]);

    let fail!: (error: Error) => void;
    log.after(new Promise<void>((_, reject) => (fail = reject)));
    log.info("request", { n: 2 });
    fail(new Error("connection reset"));
    await Promise.resolve();
    await Promise.resolve();
    vi.advanceTimersByTime(LOG_GATHER_MS);
    expect(lines().at(-1)).toEqual(["log", { level: "info", event: "request", n: 2 }]);
    expect(written).toHaveLength(2);
  });
});
