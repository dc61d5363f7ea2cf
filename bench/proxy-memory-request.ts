/**
 * The proxy's memory request (docs/benchmarks.md, "Memory: a request of 32.3 MB with 101
 * screenshots"), and the isolate's heap read over the inspector while it runs: shared by
 * bench/proxy.bench.ts (its memory row) and bench/proxy-memory.ts (the same request per checkout,
 * side by side, with V8's collection log and a capped heap).
 */
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import { startLocalStack } from "../scripts/local-stack";
import { encodePng, photoPixels } from "../test/fixtures/images";
import { post } from "./computer-use-session";
import { type GcEvent, gcLog, newGcEvents, teeingWorkerd } from "./gc-log";
import { type InspectorSession, inspectorSession } from "./inspector";

const MODEL = "claude-sonnet-4-5";

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** A task, then one screenshot tool call per image, each answered with its image. */
export function screenshotSession(task: string, shots: readonly string[]): unknown[] {
  const messages: unknown[] = [{ role: "user", content: task }];
  shots.forEach((data, i) => {
    messages.push({ role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "screenshot", input: {} }] });
    messages.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `t${i}`,
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data } }],
        },
      ],
    });
  });
  return messages;
}

/**
 * About 32 MB of request with 100 or so screenshots over the embed budget: photo-like PNGs of
 * 400 x 260, which compress poorly (about 320 KB of base64 each).
 */
export async function memoryRequest(tag: string, seed = 500): Promise<{ body: string; images: number }> {
  const shots: string[] = [];
  for (let bytes = 0, i = 0; bytes < 32e6; i++) {
    shots.push(base64(await encodePng(photoPixels(400, 260, seed + i), 400, 260, 3)));
    bytes += shots[i]!.length;
  }
  const messages = screenshotSession(`${tag} memory session`, shots);
  const body = JSON.stringify({ model: MODEL, max_tokens: 64, system: `bench memory ${tag}`, messages });
  return { body, images: shots.length };
}

/** One reading of the isolate's heap (`Runtime.getHeapUsage`), in MiB. */
export interface HeapReading {
  /** The JS heap's objects, garbage not yet collected included. */
  used: number;
  /** ArrayBuffer backing stores (outside the JS heap; WebAssembly memories among them). */
  backing: number;
  /** All three (used, backing and the embedder's own): the inspector's count. */
  total: number;
}

export async function heapReading(session: InspectorSession): Promise<HeapReading> {
  const r = await session.call<Record<string, number>>("Runtime.getHeapUsage");
  const mib = (bytes: number | undefined) => (bytes ?? 0) / 1048576;
  return {
    used: mib(r.usedSize),
    backing: mib(r.backingStorageSize),
    total: mib((r.usedSize ?? 0) + (r.backingStorageSize ?? 0) + (r.embedderHeapUsedSize ?? 0)),
  };
}

/** What a watch saw: each reading with its time (ms from the watch's start), and the one with the largest total. */
export interface HeapWatched {
  samples: number;
  peak: HeapReading;
  readings: { at: number; reading: HeapReading }[];
}

/**
 * Reads the heap again and again (1 ms apart) until the returned stop is called. workerd answers
 * the inspector only at some of the isolate's pauses (3 or 4 readings in a 5-second request), never
 * inside a synchronous stretch: the largest reading is a floor on the peak, garbage included, and
 * lands where it happens to. (A forced collection asked for over the inspector is no better: the
 * reading after it waits for a later pause, by when the heap has grown again.) V8's collection log
 * (`memoryRun`) sees every collection.
 */
export function watchHeap(session: InspectorSession): () => Promise<HeapWatched> {
  let running = true;
  let samples = 0;
  let peak: HeapReading = { used: 0, backing: 0, total: 0 };
  const readings: HeapWatched["readings"] = [];
  const start = performance.now();
  const loop = (async () => {
    while (running) {
      const reading = await heapReading(session);
      readings.push({ at: performance.now() - start, reading });
      samples++;
      if (reading.total > peak.total) peak = reading;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return { samples, peak, readings };
  };
}

/** `watch`, or `cap<MB>`: the heap capped at <MB> (`--max-heap-size`). */
export type MemoryMode = string;

/** One request of a fresh `wrangler dev`: its answer, the inspector's readings, V8's collection log. */
export interface MemoryRow {
  run: number;
  side: string;
  mode: MemoryMode;
  status: string;
  fitted: string;
  ms: number;
  samples: number;
  peak: HeapReading;
  /** Each reading: ms from the request's start, total MiB. */
  timeline: string;
  scavenges: number;
  fulls: number;
  /** MiB: the largest heap (objects, garbage included) at a collection's start. */
  objectsAtGc: number;
  /** MiB: the largest backing stores after a collection. */
  backingAtGc: number;
  /** MiB: the largest sum of the two at one collection (a floor on the total when it began). */
  bothAtGc: number;
  /** MiB: the largest heap a full collection left. */
  liveAfterFull: number;
  /** MiB: the largest heap and backing stores a full collection left (what was live then). */
  liveBothAfterFull: number;
  /** MiB: the old generation's limit V8 set itself (smallest seen), a check that the cap took. */
  limit: number;
  after: HeapReading;
  /** The log says the heap ran out. */
  fatal: boolean;
}

const mib = (bytes: number) => bytes / 1048576;
export const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** The service's isolate among those that logged: the one whose heap grew largest. */
function serviceEvents(events: GcEvent[]): GcEvent[] {
  const byIsolate = new Map<string, GcEvent[]>();
  for (const event of events) byIsolate.set(event.isolate, [...(byIsolate.get(event.isolate) ?? []), event]);
  let best: GcEvent[] = [];
  let bestSize = -1;
  for (const list of byIsolate.values()) {
    const size = Math.max(...list.map((event) => event.start_object_size ?? 0));
    if (size > bestSize) [best, bestSize] = [list, size];
  }
  return best;
}

/**
 * Starts `checkout`'s service under a fresh `wrangler dev` whose workerd logs V8's collections
 * (`--trace-gc-nvp --trace-gc-verbose`; with `cap<MB>`, its heap capped), sends each of `bodies`
 * in turn (a later one finds the isolate's fit memory full of the earlier's) while the inspector
 * reads the heap, and stops it. The figures are over all of them; the statuses one per body. Needs a `wrangler` that passes V8 flags on to workerd
 * (bench/gc-log.ts).
 */
export async function memoryRun(
  checkout: string,
  mode: MemoryMode,
  bodies: readonly string[],
  tag: string,
  run: number,
): Promise<MemoryRow> {
  const log = gcLog();
  const saved = [process.env.MINIFLARE_WORKERD_PATH, process.env.MINIFLARE_WORKERD_V8_FLAGS];
  process.env.MINIFLARE_WORKERD_PATH = teeingWorkerd(checkout, log);
  process.env.MINIFLARE_WORKERD_V8_FLAGS = [
    "--trace-gc-nvp",
    "--trace-gc-verbose",
    ...(mode.startsWith("cap") ? [`--max-heap-size=${Number(mode.slice(3))}`] : []),
  ].join(" ");
  const stack = await startLocalStack({ cwd: checkout }).finally(() => {
    for (const [name, value] of [
      ["MINIFLARE_WORKERD_PATH", saved[0]],
      ["MINIFLARE_WORKERD_V8_FLAGS", saved[1]],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
  try {
    const session = await inspectorSession(stack.inspectorPort, { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before = newGcEvents(log).events;
    const stopWatch = watchHeap(session);
    const start = performance.now();
    const statuses: string[] = [];
    const fits: string[] = [];
    for (const body of bodies) {
      try {
        const url = `${stack.url}/anthropic/v1/messages`;
        // A request with no answer in 2 minutes is recorded as hung (once seen: the isolate's thread
        // busy in the runtime's task loop, no collection logged, docs/benchmarks.md).
        const response = await Promise.race([
          post(url, body, { "x-session-id": `${tag}-memory` })(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer in 120 s")), 120_000)),
        ]);
        await response.arrayBuffer();
        statuses.push(String(response.status));
        fits.push(response.headers.get("x-edge-fitted") ?? "-");
        if (!response.ok) break;
      } catch (error) {
        statuses.push(`failed: ${(error as Error).message}`);
        break;
      }
    }
    const status = statuses.join(", ");
    const fitted = fits.join(", ") || "-";
    const ms = performance.now() - start;
    const watched = await Promise.race([
      stopWatch(),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000)),
    ]);
    // The log's tee writes after the line.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { events: all, lines } = newGcEvents(log);
    const events = serviceEvents(all);
    const fulls = events.filter((event) => event.gc !== "s");
    const failed = statuses.length < bodies.length || statuses.some((code) => code !== "200");
    // A workerd whose heap ran out is gone: nothing more to ask it.
    if (!failed) await session.call("HeapProfiler.collectGarbage");
    const after = failed ? { used: 0, backing: 0, total: 0 } : await heapReading(session);
    session.close();
    const limits = [...before, ...events].map((event) => event.old_gen_allocation_limit ?? Infinity);
    return {
      run,
      side: basename(resolve(checkout)),
      mode,
      status,
      fitted,
      ms,
      samples: watched?.samples ?? 0,
      peak: watched?.peak ?? { used: 0, backing: 0, total: 0 },
      timeline: (watched?.readings ?? [])
        .map(
          ({ at, reading }) =>
            `${at.toFixed(0)} ms ${reading.total.toFixed(1)} (${reading.used.toFixed(1)} + ${reading.backing.toFixed(1)})`,
        )
        .join("; "),
      scavenges: events.length - fulls.length,
      fulls: fulls.length,
      objectsAtGc: mib(Math.max(0, ...events.map((event) => event.start_object_size ?? 0))),
      backingAtGc: mib(Math.max(0, ...events.map((event) => event.backingStore ?? 0))),
      bothAtGc: mib(Math.max(0, ...events.map((event) => (event.start_object_size ?? 0) + (event.backingStore ?? 0)))),
      liveAfterFull: mib(Math.max(0, ...fulls.map((event) => event.end_object_size ?? 0))),
      liveBothAfterFull: mib(
        Math.max(0, ...fulls.map((event) => (event.end_object_size ?? 0) + (event.backingStore ?? 0))),
      ),
      limit: mib(Math.min(...limits)),
      after,
      fatal: lines.some((line) => /V8 fatal error|out of memory/i.test(line)),
    };
  } finally {
    await stack.stop();
  }
}

const f = (value: number) => value.toFixed(1);

export const MEMORY_TABLE_HEAD = [
  "| run | side | mode | status | fitted | ms | readings | largest reading MiB (used + backing) | objects at a GC's start, largest MiB | backing after a GC, largest MiB | both at one GC, largest MiB | left by a full GC, largest MiB | with backing MiB | full / scavenges | old-gen limit MiB | kept after (forced GC) MiB |",
  "|---|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---|",
].join("\n");

export function memoryTableRow(row: MemoryRow): string {
  return `| ${row.run} | ${row.side} | ${row.mode} | ${row.status}${row.fatal ? " (V8: out of memory)" : ""} | ${row.fitted} | ${row.ms.toFixed(0)} | ${row.samples} | ${f(row.peak.total)} (${f(row.peak.used)} + ${f(row.peak.backing)}) | ${f(row.objectsAtGc)} | ${f(row.backingAtGc)} | ${f(row.bothAtGc)} | ${f(row.liveAfterFull)} | ${f(row.liveBothAfterFull)} | ${row.fulls} / ${row.scavenges} | ${f(row.limit)} | ${f(row.after.total)} (${f(row.after.used)} + ${f(row.after.backing)}) |`;
}
