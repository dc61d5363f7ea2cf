/**
 * CPU time of a fit, ours (fitImage in Node, our SIMD kernels) against the same algorithm on sharp
 * (bench/vision-sharp.ts), on the bench's 33 input/budget pairs: process.cpuUsage() (user + system,
 * every thread of the process: sharp's libvips threads and Node's zlib pool included), the least of
 * RUNS (default 3) per pair. On a shared, loaded box wall-clock ratios swing several-fold while CPU
 * time moves little, so this is the ratio the time targets are read from there. The PNG inflate is
 * zlib-ng in WASM in both runtimes, as is every other codec of ours.
 * Where our fit went out 4:4:4 (FitResult.chroma), sharp's side makes the same 4:4:4 search. The
 * second ratio gives sharp our fit's PNG attempt on PNG sources too (bench/vision-sharp.ts
 * `SharpSteps.png`), which the first leaves out.
 * Run: npx tsx bench/vision-cpu.ts [name-substring...]
 */
import { fitImage } from "../shared/imaging/fit";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { BUDGETS, makeInputs } from "./vision-inputs";
import { withSharp } from "./vision-sharp";
import { cpuMsSince, median } from "./stats";

const wasm = loadVisionWasmNode();
const runs = Number(process.env.RUNS ?? 3);
const only = process.argv.slice(2);

async function cpuMs(run: () => Promise<unknown>): Promise<number> {
  let best = Infinity;
  await run(); // warm-up
  for (let i = 0; i < runs; i++) {
    const before = process.cpuUsage();
    await run();
    best = Math.min(best, cpuMsSince(before));
  }
  return best;
}

const ratios: number[] = [];
const withPng: number[] = [];
console.log(
  "| input | budget | ours CPU ms | sharp CPU ms | ours / sharp | sharp with the PNG step CPU ms | ours / that | ours encodes | ours decodes |",
);
console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
for (const [name, input] of await makeInputs()) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  for (const budget of BUDGETS) {
    const opts = { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
    const bytes = new Uint8Array(input);
    const fit = await fitImage(bytes, opts, wasm);
    const ours = await cpuMs(() => fitImage(bytes, opts, wasm));
    // sharp's side makes the 4:4:4 search where ours went out 4:4:4 (bench/vision-sharp.ts).
    const theirs = await cpuMs(() => withSharp(input, budget, { chroma: fit.chroma }));
    // PNG sources only: for a JPEG source the PNG step does not run, so the column repeats sharp's.
    const theirsPng = name.includes("PNG")
      ? await cpuMs(() => withSharp(input, budget, { chroma: fit.chroma, png: true }))
      : theirs;
    ratios.push(ours / theirs);
    withPng.push(ours / theirsPng);
    console.log(
      `| ${name} | ${budget / 1024} KiB${fit.chroma === "4:4:4" ? " (4:4:4)" : ""} | ${ours.toFixed(0)} | ${theirs.toFixed(0)} | ${(ours / theirs).toFixed(2)}x | ${theirsPng.toFixed(0)} | ${(ours / theirsPng).toFixed(2)}x | ${fit.encodeAttempts} | ${fit.decodes} |`,
    );
  }
}
console.log(
  `\nCPU time ours / sharp: median ${median(ratios).toFixed(2)}x, worst ${Math.max(...ratios).toFixed(2)}x over ${ratios.length} pairs`,
);
console.log(
  `CPU time ours / sharp with the PNG step on PNG sources: median ${median(withPng).toFixed(2)}x, worst ${Math.max(...withPng).toFixed(2)}x`,
);
