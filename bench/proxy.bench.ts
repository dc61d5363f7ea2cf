/**
 * The provider proxy under `wrangler dev`, side by side with calling the LLM emulator directly in
 * the same run (docs/proxy.md): the latency a 200-message request without images gains through the
 * proxy, when a streamed answer's first event arrives, and what a 60-screenshot request costs the
 * first time (every screenshot fitted) and the next time (every fit a hash hit in KV), and the
 * memory a 32 MB request of 100 screenshots takes (workerd's peak resident size over idle, the
 * isolate's heap; with a wrangler that passes V8 flags on, V8's collection log and a capped heap).
 * The computer-use session is proxy-session.bench.ts, which `npm run bench -- proxy` runs too.
 * Run: npm run bench -- proxy (PROXY_BENCH_ONLY_MEMORY=1: the memory row alone)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { encodePng, screenshotPixels } from "../test/fixtures/images";
import { v8FlagsReachWorkerd } from "./gc-log";
import { inspectorSession } from "./inspector";
import {
  base64,
  heapReading,
  MEMORY_TABLE_HEAD,
  memoryRequest,
  memoryRun,
  memoryTableRow,
  screenshotSession,
  watchHeap,
} from "./proxy-memory-request";
import { type LocalStack, startLocalStack } from "../scripts/local-stack";
import { answerTimes, median, ms, percentile, timed } from "./stats";
import { startBare } from "./bare-worker/start";
import { workerdProcesses } from "./workerd-processes";
import { post } from "./computer-use-session";

const ROUNDS = 200;
const STREAM_ROUNDS = 60;
const WARM_UP = 20;
const MODEL = "claude-sonnet-4-5";

/** A 200-message conversation of plain text (about 60 KB). */
function textConversation(tag: string, stream = false, last = "go on"): string {
  const messages = Array.from({ length: 200 }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: `${i === 0 ? tag : ""} message ${i}: ${"some words of the conversation ".repeat(10)}`,
  }));
  messages.push({ role: "user", content: last });
  return JSON.stringify({ model: MODEL, max_tokens: 64, stream, system: `bench ${tag}`, messages });
}

/** Milliseconds to the first body chunk and to the end of a streamed answer. */
async function firstEvent(call: () => Promise<Response>): Promise<{ first: number; total: number }> {
  const { first, end } = await answerTimes(call);
  return { first, total: end };
}

async function interleaved<T>(rounds: number, sides: readonly (() => Promise<T>)[]): Promise<T[][]> {
  const samples = sides.map(() => [] as T[]);
  for (let round = 0; round < WARM_UP + rounds; round++) {
    const order = sides.map((_, i) => i).sort(() => Math.random() - 0.5);
    for (const i of order) {
      const value = await sides[i]!();
      if (round >= WARM_UP) samples[i]!.push(value);
    }
  }
  return samples;
}

async function main() {
  const stack = await startLocalStack();
  // The runtime's floor: a bare Worker under wrangler dev that forwards the same POST unchanged.
  const bare = await startBare("{}", `${stack.emulatorUrl}/llm/anthropic`);
  const direct = `${stack.emulatorUrl}/llm/anthropic/v1/messages`;
  const passThrough = `${bare.url}/v1/messages`;
  const proxied = `${stack.url}/anthropic/v1/messages`;
  const tag = `bench${Date.now().toString(36)}`;
  const lines: string[] = [];
  try {
    // PROXY_BENCH_ONLY_MEMORY=1: the memory row alone.
    if (process.env.PROXY_BENCH_ONLY_MEMORY) return console.log((await memoryRow(stack, proxied, tag)).join("\n"));
    // 1. Added latency, 200 messages, no images.
    const body = textConversation(tag);
    const [directMs, bareMs, proxyMs] = (
      await interleaved(ROUNDS, [
        () => timed(post(direct, body)),
        () => timed(post(passThrough, body)),
        () => timed(post(proxied, body)),
      ])
    ).map((side) => side.map((s) => s.ms));
    lines.push(
      "### Added latency: a 200-message request without images",
      "",
      `${ROUNDS} sequential requests per side, interleaved in a random order per round, after ${WARM_UP} warm-up rounds; the answer read to its last byte.`,
      "",
    );
    lines.push("| path | p50 ms | p99 ms | added over direct (p50) |", "|---|---|---|---|");
    const row = (name: string, values: number[]) =>
      `| ${name} | ${ms(median(values))} | ${ms(percentile(values, 99))} | ${ms(median(values) - median(directMs!))} |`;
    lines.push(row("emulator directly", directMs!));
    lines.push(row("a bare pass-through Worker (wrangler dev)", bareMs!));
    lines.push(row("through the proxy (wrangler dev)", proxyMs!));
    lines.push(`| the proxy over the bare pass-through (p50) | ${ms(median(proxyMs!) - median(bareMs!))} | | |`, "");

    // 2. First streamed event (the emulator pauses 20 ms between events).
    const streamBody = textConversation(tag, true, "[slowstream:20] go on");
    const [directStream, bareStream, proxyStream] = await interleaved(STREAM_ROUNDS, [
      () => firstEvent(post(direct, streamBody)),
      () => firstEvent(post(passThrough, streamBody)),
      () => firstEvent(post(proxied, streamBody)),
    ]);
    lines.push(
      "### First streamed event",
      "",
      `${STREAM_ROUNDS} streamed answers per side (9 events, 20 ms apart), interleaved, after ${WARM_UP} warm-up rounds.`,
      "",
    );
    lines.push("| path | first event p50 ms | whole answer p50 ms |", "|---|---|---|");
    lines.push(
      `| emulator directly | ${ms(median(directStream!.map((s) => s.first)))} | ${ms(median(directStream!.map((s) => s.total)))} |`,
    );
    lines.push(
      `| a bare pass-through Worker | ${ms(median(bareStream!.map((s) => s.first)))} | ${ms(median(bareStream!.map((s) => s.total)))} |`,
    );
    lines.push(
      `| through the proxy | ${ms(median(proxyStream!.map((s) => s.first)))} | ${ms(median(proxyStream!.map((s) => s.total)))} |`,
    );
    lines.push(
      `| later through the proxy than directly (p50) | ${ms(median(proxyStream!.map((s) => s.first)) - median(directStream!.map((s) => s.first)))} | |`,
      `| later through the proxy than through the bare pass-through (p50) | ${ms(median(proxyStream!.map((s) => s.first)) - median(bareStream!.map((s) => s.first)))} | |`,
      "",
    );

    if (process.env.PROXY_BENCH_SKIP_FIT) return console.log(lines.join("\n"));
    // 3. A 60-screenshot request: every screenshot fitted the first time, a hash hit after.
    const shots: string[] = [];
    for (let i = 0; i < 60; i++)
      shots.push(base64(await encodePng(screenshotPixels(1800, 1125, 100 + i), 1800, 1125, 3)));
    const messages = screenshotSession(`${tag} fit session`, shots);
    const heavy = JSON.stringify({ model: MODEL, max_tokens: 64, system: `bench fit ${tag}`, messages });
    // strategy off: this row measures fitting alone, not retirement.
    const fitRows: [string, () => Promise<Response>][] = [
      ["emulator directly (nothing fitted)", post(direct, heavy)],
      ["through the proxy, first time (60 fits)", post(proxied, heavy, { "x-session-id": `${tag}-fit` })],
      ["through the proxy, again (60 hash hits)", post(proxied, heavy, { "x-session-id": `${tag}-fit` })],
    ];
    lines.push(
      "### A request with 60 screenshots of 1800 x 1125 (each over the long edge)",
      "",
      `One request of ${(heavy.length / 1e6).toFixed(1)} MB; the proxy fits each screenshot once and keeps the fit in KV by its hash.`,
      "",
    );
    lines.push("| path | ms | X-Edge-Fitted |", "|---|---|---|");
    for (const [name, run] of fitRows) {
      const start = performance.now();
      const response = await run();
      await response.arrayBuffer();
      lines.push(`| ${name} | ${ms(performance.now() - start)} | ${response.headers.get("x-edge-fitted") ?? "-"} |`);
    }

    // 4. Memory: a 32 MB request of 100 screenshots, each fitted, in the one workerd process.
    lines.push("", ...(await memoryRow(stack, proxied, tag)));
    console.log(lines.join("\n"));
  } finally {
    bare.stop();
    await stack.stop();
  }
}

/**
 * The workerd process that runs the service: wrangler dev starts two, one listening on the public
 * port (its dev proxy) and one on a port of its own (the worker); the second is the one.
 */
function workerdPid(group: number, publicUrl: string): number {
  const workerds = workerdProcesses(group);
  const publicEntry = `entry=127.0.0.1:${new URL(publicUrl).port}`;
  const worker = workerds.find((w) => !w.args.includes(publicEntry)) ?? workerds[0];
  if (!worker) throw new Error(`no workerd in process group ${group}`);
  return worker.pid;
}

/** A process's resident size and its peak since the last reset, in MB (Linux /proc). */
function residentMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

/**
 * One request of about 32 MB with 100 screenshots over the embed budget, through the proxy: the
 * workerd process's peak resident size during it, over its resident size just before (the peak is
 * reset first: `clear_refs` 5). The process holds the runtime and every isolate besides this
 * request, so the growth is an upper bound on what the request took in its isolate. Then the
 * isolate: the inspector's readings during the request (a floor), what it keeps after it, and, where
 * this checkout's wrangler passes V8 flags on to workerd (bench/gc-log.ts), the same request in a
 * fresh `wrangler dev` twice: with V8's collection log (the heap at every collection), and with
 * the heap capped at 128 MB like a deployed isolate's (does it still succeed?).
 */
async function memoryRow(stack: LocalStack, proxied: string, tag: string): Promise<string[]> {
  const { body, images } = await memoryRequest(tag);
  const pid = workerdPid(stack.processGroup, proxied);
  const session = await inspectorSession(stack.inspectorPort, { timeoutMs: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = residentMb(pid);
  const heapBefore = await heapReading(session);
  const stopWatch = watchHeap(session);
  // Sampled as well, every 10 ms: the kernel's peak (VmHWM) is not kept up to date on every page.
  let sampled = before.rss;
  const sampler = setInterval(() => {
    sampled = Math.max(sampled, residentMb(pid).rss);
  }, 10);
  const start = performance.now();
  const response = await post(proxied, body, { "x-session-id": `${tag}-memory` })();
  await response.arrayBuffer();
  const took = performance.now() - start;
  clearInterval(sampler);
  const watched = await stopWatch();
  await session.call("HeapProfiler.collectGarbage");
  const kept = await heapReading(session);
  session.close();
  const after = residentMb(pid);
  const peak = Math.max(after.peak, sampled);
  const lines = [
    `### A request of ${(body.length / 1e6).toFixed(1)} MB with ${images} screenshots (each over the embed budget)`,
    "",
    "workerd's resident size (the whole process: runtime, every isolate) just before the request,",
    "and its peak while the request ran (the kernel's VmHWM, reset first, and RSS sampled every 10 ms).",
    "",
    "| status | X-Edge-Fitted | ms | resident before MB | peak during MB | growth MB |",
    "|---|---|---|---|---|---|",
    `| ${response.status} | ${response.headers.get("x-edge-fitted") ?? "-"} | ${ms(took)} | ${before.rss.toFixed(0)} | ${peak.toFixed(0)} | ${(peak - before.rss).toFixed(0)} |`,
    "",
    `The isolate from the inspector (\`Runtime.getHeapUsage\`: the JS heap's objects, garbage included, plus ArrayBuffer backing stores): just before the request, the largest of the ${watched.samples} readings workerd answered while it ran (only at some of its pauses: a floor on the peak that lands where it happens to), and what it keeps after a forced collection:`,
    "",
    "| before MiB | largest reading MiB (objects + backing) | kept after MiB |",
    "|---|---|---|",
    `| ${heapBefore.total.toFixed(1)} | ${watched.peak.total.toFixed(1)} (${watched.peak.used.toFixed(1)} + ${watched.peak.backing.toFixed(1)}) | ${kept.total.toFixed(1)} |`,
    "",
  ];
  if (!v8FlagsReachWorkerd(".")) {
    lines.push(
      "The peak from V8's collection log and the run with a capped heap need a wrangler that passes V8 flags on to workerd (bench/gc-log.ts): `bench/proxy-memory.ts` with one.",
    );
    return lines;
  }
  lines.push(
    "The same request in a fresh `wrangler dev`, from V8's collection log (every collection: the heap's objects, garbage included, when it began; the backing stores after it; what a full collection left), then with the heap capped (`--max-heap-size=128`):",
    "",
    MEMORY_TABLE_HEAD,
  );
  for (const mode of ["watch", "cap128"]) lines.push(memoryTableRow(await memoryRun(".", mode, [body], tag, 1)));
  return lines;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
