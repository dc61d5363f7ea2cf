/**
 * Where the computer-use session's screenshot fit spends its time in workerd and in Node, side by
 * side: the V8 CPU profiler over FITS (default 10) fits after three warm-up fits in each runtime
 * (workerd: the bench Worker, bench/vision-worker, through wrangler's inspector; Node:
 * node:inspector), self time summed by function, the top 15 of each printed with the garbage
 * collector's share. Not a benchmark (the profiler and, in workerd, a connected inspector add
 * their own cost): it shows which functions take the runtimes' difference.
 * Run: [NODE_DEBUGGER=1] npx tsx bench/vision-workerd-profile.ts
 */
import { Session } from "node:inspector/promises";
import { loadavg } from "node:os";
import { fitImage } from "../shared/imaging/fit";
import { screenshot } from "./computer-use-session";
import { inspectorSession } from "./inspector";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { startWorker } from "./vision-worker/start";

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}
const fits = Number(process.env.FITS ?? 10);
const wasm = loadVisionWasmNode();
const bytes = new Uint8Array(Buffer.from(await screenshot(16, false), "base64"));
const opts = { embedTargetBytes: 262144, maxLongEdge: 1568, maxInputPixels: 16_777_216 };

/** ms of self time per function name, over all samples. */
function selfTimes(profile: Profile): Map<string, number> {
  const names = new Map(
    profile.nodes.map((n) => [
      n.id,
      n.callFrame.functionName || `(anonymous ${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber})`,
    ]),
  );
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = names.get(id)!;
    out.set(name, (out.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}
function print(label: string, times: Map<string, number>) {
  const idle = (times.get("(idle)") ?? 0) + (times.get("(program)") ?? 0);
  const total = [...times.values()].reduce((a, b) => a + b, 0) - idle;
  console.log(`\n${label}: ${(total / fits).toFixed(1)} ms a fit sampled (idle and (program) left out)`);
  console.log(`  ${((times.get("(garbage collector)") ?? 0) / fits).toFixed(2).padStart(7)} ms  (garbage collector)`);
  for (const [name, ms] of [...times]
    .filter(([n]) => n !== "(idle)" && n !== "(program)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15))
    console.log(`  ${(ms / fits).toFixed(2).padStart(7)} ms  ${name}`);
}

console.log(
  `load average at the start ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
const worker = await startWorker();
try {
  const post = async () => {
    const res = await fetch(`${worker.url}/?budget=262144`, { method: "POST", body: bytes });
    await res.arrayBuffer();
  };
  for (let i = 0; i < 3; i++) {
    await post();
    await fitImage(bytes, opts, wasm);
  }
  // Through wrangler's inspector proxy, which enables V8's debugger for a connecting client (workerd's
  // own inspector did not answer a second session): WASM may then run in V8's debugging tier, so
  // the WASM rows here can be slower than without the profiler.
  const devtools = await inspectorSession(worker.inspectorPort);
  await devtools.call("Profiler.enable");
  await devtools.call("Profiler.setSamplingInterval", { interval: 100 });
  await devtools.call("Profiler.start");
  for (let i = 0; i < fits; i++) await post();
  const { profile } = await devtools.call<{ profile: Profile }>("Profiler.stop");
  devtools.close();
  const session = new Session();
  session.connect();
  // NODE_DEBUGGER=1: Node's side with V8's debugger on too, as wrangler's proxy has workerd's.
  if (process.env.NODE_DEBUGGER) await session.post("Debugger.enable");
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  for (let i = 0; i < fits; i++) await fitImage(bytes, opts, wasm);
  const node = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
  print("workerd", selfTimes(profile));
  print("Node", selfTimes(node.profile));
  console.log(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  worker.stop();
}
