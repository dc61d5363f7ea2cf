/**
 * V8's collections per turn of the computer-use session through the proxy (docs/speed.md, "A
 * computer-use turn through the proxy"): per turn (16 to PROXY_SESSION_LAST_TURN), a new turn and
 * the same turn again (all seen), for each checkout named in PROXY_GC_SIDES (comma-separated),
 * taking turns. Each side's workerd runs with `--trace-gc-nvp` and its output teed to a file, so the
 * scavenges and full collections (mark-compacts) that fell inside each request are counted by their
 * log lines, with the bytes the scavenges promoted into the old generation (what fills it, with
 * what is allocated there directly) and the heap's size after each full collection. With PROXY_GC_SAMPLE=1, V8's allocation
 * sampling over the new turns (collected objects included) names the functions that allocate; the
 * profiler's own work moves the collections (a mark-compact after each sampled turn), so count
 * them in a run without it.
 *
 * Needs a `wrangler` that passes V8 flags on to workerd, in each checkout's node_modules
 * (bench/gc-log.ts says how). A tool, not a benchmark of its own.
 * PROXY_GC_V8_FLAGS adds V8 flags (e.g. `--trace-gc-verbose`: each space's size at each collection,
 * left in the log, whose path is printed).
 * Run: PROXY_GC_SIDES=<checkout>,<checkout> npx tsx bench/proxy-gc.ts
 */
import { execSync } from "node:child_process";
import { basename, resolve } from "node:path";
import { type GcEvent, type GcLog, gcLog, newGcEvents, teeingWorkerd } from "./gc-log";
import { startLocalStack } from "../scripts/local-stack";
import { FIRST_TURN, LAST_TURN, screenshot, send, turnBody } from "./computer-use-session";
import { inspectorSession } from "./inspector";
import { median } from "./stats";

interface Side {
  name: string;
  log: GcLog;
  stack: Awaited<ReturnType<typeof startLocalStack>>;
  rows: { new: Counted[]; seen: Counted[] };
  sampled: Map<string, number>;
}
interface Counted {
  scavenges: number;
  majors: number;
  /** MB the request's scavenges moved into the old generation. */
  promoted: number;
  /** The heap's objects (MB) after each full collection in the request. */
  after: number[];
}

function count(events: GcEvent[]): Counted {
  const majors = events.filter((event) => event.gc !== "s");
  return {
    scavenges: events.length - majors.length,
    majors: majors.length,
    promoted: events.reduce((sum, event) => sum + (event.gc === "s" ? (event.promoted ?? 0) : 0), 0) / 1e6,
    after: majors.map((event) => (event.end_object_size ?? Number.NaN) / 1e6),
  };
}

async function main() {
  const checkouts = (process.env.PROXY_GC_SIDES ?? ".").split(",").filter(Boolean);
  const sample = process.env.PROXY_GC_SAMPLE === "1";
  const sides: Side[] = [];
  for (const checkout of checkouts) {
    const log = gcLog();
    process.env.MINIFLARE_WORKERD_PATH = teeingWorkerd(checkout, log);
    process.env.MINIFLARE_WORKERD_V8_FLAGS = `--trace-gc-nvp ${process.env.PROXY_GC_V8_FLAGS ?? ""}`.trim();
    const stack = await startLocalStack({ cwd: checkout, args: ["--minify=false"] });
    sides.push({
      name: basename(resolve(checkout)),
      log,
      stack,
      rows: { new: [], seen: [] },
      sampled: new Map(),
    });
  }
  try {
    const tag = `gc${Date.now().toString(36)}`;
    const shots: string[] = [];
    for (let i = 0; i < LAST_TURN; i++) shots.push(await screenshot(3000 + i, false));
    const task = `${tag}: book the cheapest flight`;
    for (let turn = 1; turn < FIRST_TURN; turn++)
      for (const side of sides)
        await (await send(`${side.stack.url}/anthropic/v1/messages`, turnBody(task, shots, turn, false), tag)).text();
    const sessions = new Map<Side, Awaited<ReturnType<typeof inspectorSession>>>();
    if (sample)
      for (const side of sides)
        sessions.set(side, await inspectorSession(side.stack.inspectorPort, { timeoutMs: 30_000 }));
    for (let turn = FIRST_TURN; turn <= LAST_TURN; turn++) {
      const body = turnBody(task, shots, turn, false);
      for (const side of [...sides].sort(() => Math.random() - 0.5)) {
        const url = `${side.stack.url}/anthropic/v1/messages`;
        newGcEvents(side.log);
        const inspector = sessions.get(side);
        await inspector?.call("HeapProfiler.startSampling", {
          samplingInterval: 16 * 1024,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
        for (const row of ["new", "seen"] as const) {
          const response = await send(url, body, tag);
          await response.arrayBuffer();
          if (!response.ok) throw new Error(`status ${response.status}`);
          // The Worker's waitUntil work ends after the answer, and the log's tee after the line.
          await new Promise((done) => setTimeout(done, 150));
          if (row === "new" && inspector) {
            const { profile } = await inspector.call<{ profile: { head: HeapNode } }>("HeapProfiler.stopSampling");
            if (profile) tally(profile.head, side.sampled);
          }
          side.rows[row].push(count(newGcEvents(side.log).events));
        }
      }
    }
    for (const session of sessions.values()) session.close();
  } finally {
    for (const side of sides) await side.stack.stop();
  }
  const turns = LAST_TURN - FIRST_TURN + 1;
  console.log(
    `turns ${FIRST_TURN}-${LAST_TURN}; load average ${execSync("cat /proc/loadavg").toString().split(" ").slice(0, 3).join(" ")}`,
  );
  console.log(
    "| side, turn | full collections (all turns) | per turn | scavenges per turn, mean | MB promoted to the old generation per turn, mean / p50 | heap after a full collection, MB p50 |\n|---|---:|---:|---:|---:|---:|",
  );
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  for (const side of sides)
    for (const row of ["new", "seen"] as const) {
      const counted = side.rows[row];
      const majors = counted.reduce((sum, c) => sum + c.majors, 0);
      const after = counted.flatMap((c) => c.after);
      const promoted = counted.map((c) => c.promoted);
      console.log(
        `| ${side.name} ${row} | ${majors} | ${(majors / turns).toFixed(2)} | ${mean(counted.map((c) => c.scavenges)).toFixed(2)} | ${mean(promoted).toFixed(2)} / ${median(promoted).toFixed(2)} | ${after.length ? median(after).toFixed(1) : "-"} |`,
      );
    }
  for (const side of sides) console.log(`${side.name}: workerd's log ${side.log.path}`);
  for (const side of sides)
    if (side.log.garbled > 0) console.log(`${side.name}: ${side.log.garbled} garbled GC lines not counted`);
  if (sample)
    for (const side of sides) {
      const total = [...side.sampled.values()].reduce((a, b) => a + b, 0);
      console.log(
        `\n${side.name}: sampled allocation over ${turns} new turns, ${(total / turns / 1e6).toFixed(2)} MB a turn`,
      );
      const top = [...side.sampled.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15);
      for (const [where, bytes] of top) console.log(`  ${(bytes / turns / 1e6).toFixed(2)} MB  ${where}`);
    }
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** Each sampled allocation's bytes, by the function that made it (its file and line). */
function tally(node: HeapNode, into: Map<string, number>): void {
  if (node.selfSize > 0) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = `${functionName || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    into.set(where, (into.get(where) ?? 0) + node.selfSize);
  }
  for (const child of node.children) tally(child, into);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
