/**
 * Structured logging port. One JSON line per event; callers pass only non-secret fields (never a
 * key, a token, an upstream body or a URL that was refused for carrying a secret).
 */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

export const consoleLogger: Logger = {
  info: (event, fields) => console.log(JSON.stringify({ level: "info", event, ...fields })),
  warn: (event, fields) => console.warn(JSON.stringify({ level: "warn", event, ...fields })),
  error: (event, fields) => console.error(JSON.stringify({ level: "error", event, ...fields })),
};

/** For tests and benchmarks that want quiet output. */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
