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

/**
 * A console logger whose lines are gathered and written together LOG_GATHER_MS later, in order
 * (each run of lines of one level in one console call): a request's line goes out after its
 * response was handed to the server, not on the request's path, and a burst of requests costs one
 * write and one timer, not one each. For a runtime whose console write is a blocking write on the
 * request's thread (Deno's); `drain` writes what waits at once (before an exit).
 */
export function afterResponseLogger(): Logger & { drain(): void } {
  type Method = "log" | "warn" | "error";
  const waiting: Array<[Method, string]> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drain = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const lines = waiting.splice(0);
    for (let start = 0; start < lines.length; ) {
      const method = lines[start]![0];
      let end = start + 1;
      while (end < lines.length && lines[end]![0] === method) end++;
      console[method](
        lines
          .slice(start, end)
          .map(([, line]) => line)
          .join("\n"),
      );
      start = end;
    }
  };
  const line =
    (level: "info" | "warn" | "error", method: Method) => (event: string, fields?: Record<string, unknown>) => {
      // Made into text at once: the fields are the caller's to change after this returns.
      waiting.push([method, JSON.stringify({ level, event, ...fields })]);
      timer ??= setTimeout(drain, LOG_GATHER_MS);
    };
  return { info: line("info", "log"), warn: line("warn", "warn"), error: line("error", "error"), drain };
}
