/** The console adapter of the logging port: one JSON line per event. */
import type { Logger } from "./ports";

export const consoleLogger: Logger = {
  info: (event, fields) => console.log(JSON.stringify({ level: "info", event, ...fields })),
  warn: (event, fields) => console.warn(JSON.stringify({ level: "warn", event, ...fields })),
  error: (event, fields) => console.error(JSON.stringify({ level: "error", event, ...fields })),
};

/** For tests and benchmarks that want quiet output. */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

/** How long an afterResponseLogger gathers lines before it writes them, at most. */
export const LOG_GATHER_MS = 10;
/** How long a line logged while a request is in flight waits for a response to be handed over, at most. */
export const LOG_HOLD_MS = 1000;

/** Where an afterResponseLogger's text goes: `text` is one or more lines, without the last newline. */
export type LogWrite = (method: "log" | "warn" | "error", text: string) => void;

/**
 * A console logger whose lines are written off the request's path, in order (each run of lines of
 * one level in one write): for a runtime whose console write is a blocking write on the request's
 * thread (Deno's). A line is written LOG_GATHER_MS after it was logged, or, while a request is in
 * flight (`after`), LOG_GATHER_MS after a response was handed over (at the latest LOG_HOLD_MS
 * after it was logged): the timer that gathers a burst of lines into one write is set after the
 * response, not on the request's path, where setting it cost more than the write. `drain` writes
 * what waits at once (before an exit). `write` takes each text (console's method by default).
 */
export function afterResponseLogger(
  write: LogWrite = (method, text) => console[method](text),
): Logger & { drain(): void; after(handedOver: Promise<unknown>): void } {
  type Method = "log" | "warn" | "error";
  const waiting: Array<[Method, string]> = [];
  /** Writes what waits LOG_GATHER_MS after it was set. */
  let gather: ReturnType<typeof setTimeout> | undefined;
  /** Writes what waits LOG_HOLD_MS after a line was logged with a request in flight (a long stream). */
  let hold: ReturnType<typeof setTimeout> | undefined;
  /** Promises given to `after` not settled yet. */
  let inFlight = 0;
  const drain = () => {
    const lines = waiting.splice(0);
    for (let start = 0; start < lines.length; ) {
      const method = lines[start]![0];
      let end = start + 1;
      while (end < lines.length && lines[end]![0] === method) end++;
      write(
        method,
        lines
          .slice(start, end)
          .map(([, line]) => line)
          .join("\n"),
      );
      start = end;
    }
  };
  // Each timer, once set, runs out (a drain leaves it): the next line would only set another.
  const gathered = () => {
    gather = undefined;
    drain();
  };
  const held = () => {
    hold = undefined;
    drain();
  };
  const settled = () => {
    inFlight--;
    if (waiting.length > 0) gather ??= setTimeout(gathered, LOG_GATHER_MS);
  };
  const line =
    (level: "info" | "warn" | "error", method: Method) => (event: string, fields?: Record<string, unknown>) => {
      // Made into text at once: the fields are the caller's to change after this returns.
      waiting.push([method, JSON.stringify({ level, event, ...fields })]);
      if (inFlight === 0) gather ??= setTimeout(gathered, LOG_GATHER_MS);
      else hold ??= setTimeout(held, LOG_HOLD_MS);
    };
  return {
    info: line("info", "log"),
    warn: line("warn", "warn"),
    error: line("error", "error"),
    drain: () => {
      clearTimeout(gather);
      clearTimeout(hold);
      gather = hold = undefined;
      drain();
    },
    after: (handedOver) => {
      inFlight++;
      handedOver.then(settled, settled);
    },
  };
}
