/** The console adapter of the logging port: one JSON line per event. */
import type { Logger } from "./ports";

export const consoleLogger: Logger = {
  info: (event, fields) => console.log(JSON.stringify({ level: "info", event, ...fields })),
  warn: (event, fields) => console.warn(JSON.stringify({ level: "warn", event, ...fields })),
  error: (event, fields) => console.error(JSON.stringify({ level: "error", event, ...fields })),
};

/** For tests and benchmarks that want quiet output. */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
