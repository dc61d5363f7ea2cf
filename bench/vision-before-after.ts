/**
 * The typical screenshots (bench/vision-inputs.ts makeScreenshotInputs) and the computer-use
 * session's screenshot (bench/computer-use-session.ts) fitted at 256 KiB by this checkout and by
 * another (`BEFORE`, e.g. /work/main), side by side in one run: per round, each side in Node (our
 * SIMD kernels, process CPU time) and each side's bench Worker in workerd (bench/vision-worker:
 * workerd CPU and page faults, less a header-only request's), then sharp with our algorithm on one
 * thread (bench/vision-sharp.ts); the order of the two sides alternates. Medians of ROUNDS
 * (default 7); the bytes each side fitted are compared.
 * Run: BEFORE=/work/main npx tsx bench/vision-before-after.ts [name-substring...]
 */
import { loadavg } from "node:os";
import { resolve } from "node:path";
import sharp from "sharp";
import type { FitResult } from "../shared/ports";
import { screenshot } from "./computer-use-session";
import { cpuMsSince, median } from "./stats";
import { makeScreenshotInputs } from "./vision-inputs";
import { withSharp } from "./vision-sharp";
import { startWorker } from "./vision-worker/start";
import { workerdFaults } from "./workerd-processes";

const before = process.env.BEFORE;
if (!before) throw new Error("BEFORE=<the other checkout> (e.g. /work/main)");
const rounds = Number(process.env.ROUNDS ?? 7);
const only = process.argv.slice(2);
const budget = 256 * 1024;
const opts = { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
sharp.concurrency(1);

type Fit = (bytes: Uint8Array, o: typeof opts, wasm: unknown) => Promise<FitResult>;
const sides = await Promise.all(
  [resolve(before), resolve(".")].map(async (root) => {
    const { fitImage } = (await import(`${root}/shared/imaging/fit.ts`)) as { fitImage: Fit };
    const { loadVisionWasmNode } = await import(`${root}/bench/vision-wasm-node.ts`);
    return { fitImage, wasm: loadVisionWasmNode(), worker: await startWorker(root) };
  }),
);

/** A POST to the bench Worker, tried again where the connection broke (a loaded box drops one now and then). */
async function post(url: string, body: Uint8Array): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { method: "POST", body: body as Uint8Array<ArrayBuffer> });
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
try {
  const inputs = await makeScreenshotInputs();
  inputs.push(["session 1920x1080 light PNG", Buffer.from(await screenshot(1, false), "base64")]);
  console.log(`load average at the start: ${load()}; ${rounds} rounds, medians\n`);
  console.log(
    "| input | Node CPU ms before | after | workerd CPU ms before | after | workerd page faults before | after | sharp CPU ms | after / sharp, Node | after / sharp, workerd | same bytes |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
  for (const [name, input] of inputs) {
    if (only.length && !only.some((o) => name.includes(o))) continue;
    const bytes = new Uint8Array(input);
    const node: number[][] = [[], []],
      cpu: number[][] = [[], []],
      faults: number[][] = [[], []],
      theirs: number[] = [];
    const out: string[][] = [[], []];
    for (let round = -1; round < rounds; round++) {
      for (let i = 0; i < 2; i++) {
        const k = round % 2 ? 1 - i : i;
        const side = sides[k]!;
        const start = process.cpuUsage();
        const fit = await side.fitImage(bytes, opts, side.wasm);
        const nodeMs = cpuMsSince(start);
        const worker = side.worker;
        let c = worker.cpuMs()!;
        await (await post(`${worker.url}?mode=header`, bytes)).arrayBuffer();
        const headerCpu = worker.cpuMs()! - c;
        const f = workerdFaults(worker.group)!;
        c = worker.cpuMs()!;
        const res = await post(`${worker.url}?budget=${budget}`, bytes);
        const body = Buffer.from(await res.arrayBuffer());
        const fitCpu = worker.cpuMs()! - c - headerCpu;
        const fitFaults = workerdFaults(worker.group)! - f;
        out[k]!.push(Buffer.from(fit.data).toString("base64"), body.toString("base64"));
        if (round < 0) continue; // warm-up
        node[k]!.push(nodeMs);
        cpu[k]!.push(fitCpu);
        faults[k]!.push(fitFaults);
      }
      const start = process.cpuUsage();
      await withSharp(input, budget);
      if (round >= 0) theirs.push(cpuMsSince(start));
    }
    const same = out[0]!.every((b, i) => b === out[1]![i]) && new Set(out[1]).size === 1;
    const m = (a: number[]) => median(a);
    console.log(
      `| ${name} | ${m(node[0]!).toFixed(1)} | ${m(node[1]!).toFixed(1)} | ${m(cpu[0]!).toFixed(1)} | ${m(cpu[1]!).toFixed(1)} | ${m(faults[0]!)} | ${m(faults[1]!)} | ${m(theirs).toFixed(1)} | ${(m(node[1]!) / m(theirs)).toFixed(2)}x | ${(m(cpu[1]!) / m(theirs)).toFixed(2)}x | ${same ? "yes" : "NO"} |`,
    );
  }
  console.log(`\nload average at the end: ${load()}`);
} finally {
  for (const side of sides) side.worker.stop();
}
