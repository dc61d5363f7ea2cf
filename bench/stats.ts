/** Small statistics and timing helpers shared by the benchmarks. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: number[]): number => percentile(values, 50);

/** This process's CPU time since `start` (process.cpuUsage: user + system, every thread), in ms. */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : "-");

/** Times one request through to its last body byte; reports its X-Cache. */
export async function timed(fn: () => Promise<Response>): Promise<{ ms: number; cache: string }> {
  const start = performance.now();
  const response = await fn();
  await response.arrayBuffer();
  return { ms: performance.now() - start, cache: response.headers.get("x-cache") ?? "" };
}

/**
 * Times one request read chunk by chunk: ms to its headers, to its first body chunk (a streamed
 * answer's first event) and to its end, and the response (its body read).
 */
export async function answerTimes(
  call: () => Promise<Response>,
): Promise<{ head: number; first: number; end: number; response: Response }> {
  const start = performance.now();
  const response = await call();
  const head = performance.now() - start;
  const reader = response.body!.getReader();
  let first = Number.NaN;
  for (;;) {
    const { done } = await reader.read();
    if (Number.isNaN(first)) first = performance.now() - start;
    if (done) break;
  }
  return { head, first, end: performance.now() - start, response };
}
