/**
 * Whether a fit's CPU time falls as the same screenshot is fitted again and again (V8's tiering:
 * WASM from Liftoff to TurboFan, JS to Maglev/TurboFan), in Node and in workerd (the bench
 * Worker, bench/vision-worker) side by side: per round, one fit in Node (process CPU) and one in
 * workerd (workerd CPU less a header-only request's), interleaved. Prints every round's figures,
 * then the medians of the first and last thirds. `STAGE=decode|resample` fits only that far
 * (the bench Worker's modes; Node runs the full fit either way).
 * Run: ROUNDS=30 npx tsx bench/vision-repeat.ts
 */
import { loadavg } from "node:os";
import { fitImage } from "../shared/imaging/fit";
import { screenshot } from "./computer-use-session";
import { cpuMsSince, median } from "./stats";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { startWorker } from "./vision-worker/start";
import { workerdFaults } from "./workerd-processes";

const rounds = Number(process.env.ROUNDS ?? 30);
const stage = process.env.STAGE;
const wasm = loadVisionWasmNode();
const bytes = new Uint8Array(Buffer.from(await screenshot(16, false), "base64"));
const opts = { embedTargetBytes: 262144, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
const worker = await startWorker();
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
try {
  console.log(`load average at the start ${load()}`);
  const node: number[] = [],
    workerd: number[] = [];
  const query = stage ? `mode=${stage}` : "budget=262144&encoder=baseline&simd=1";
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage();
    await fitImage(bytes, opts, wasm);
    node.push(cpuMsSince(start));
    let c = worker.cpuMs()!;
    await (await fetch(`${worker.url}/?mode=header`, { method: "POST", body: bytes })).arrayBuffer();
    const header = worker.cpuMs()! - c;
    c = worker.cpuMs()!;
    const f = workerdFaults(worker.group)!;
    const res = await fetch(`${worker.url}/?${query}`, { method: "POST", body: bytes });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`worker answered ${res.status}`);
    workerd.push(worker.cpuMs()! - c - header);
    const faults = workerdFaults(worker.group)! - f;
    console.log(
      `round ${r + 1}: Node ${node.at(-1)!.toFixed(1)} ms, workerd ${workerd.at(-1)!.toFixed(1)} ms, ${faults} faults`,
    );
  }
  const third = Math.max(1, Math.floor(rounds / 3));
  const m = (a: number[]) => median(a).toFixed(1);
  console.log(
    `first ${third}: Node ${m(node.slice(0, third))}, workerd ${m(workerd.slice(0, third))}; last ${third}: Node ${m(node.slice(-third))}, workerd ${m(workerd.slice(-third))}`,
  );
  console.log(`load average at the end ${load()}`);
} finally {
  worker.stop();
}
