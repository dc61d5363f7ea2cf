/**
 * The fits that shrink below the long-edge cap (nothing fits at quality 30 at the cap: the 64 KiB
 * pairs of screenshots and the Display P3 photo): size, quality, bytes, decodes, time, and PSNR at
 * the output's size and at the full target size against sharp's Lanczos3 of the original, as
 * bench/vision.bench.ts measures them. Run it at two commits to compare (docs/vision-decisions.md,
 * "Shrinking from the cap-size render").
 * Run: npx tsx bench/vision-shrink.ts
 */
import { fitImage } from "../shared/imaging/fit";
import { makeInputs } from "./vision-inputs";
import { psnr, psnrAtFull } from "./vision-psnr";
import { loadVisionWasmNode } from "./vision-wasm-node";

const wasm = loadVisionWasmNode();
const MAX_EDGE = 1568;
const BUDGET = 64 * 1024;

const rows = [
  "| input (64 KiB) | output | bytes | decodes | ms | PSNR at its size dB | PSNR at full size dB |",
  "|---|---|---:|---:|---:|---:|---:|",
];
for (const [name, input] of await makeInputs()) {
  const opts = { embedTargetBytes: BUDGET, maxLongEdge: MAX_EDGE, maxInputPixels: 16_777_216 };
  const fit = await fitImage(new Uint8Array(input), opts, wasm);
  if (fit.width >= MAX_EDGE || fit.height >= MAX_EDGE) continue; // fitted at the cap: not a shrink
  if (Math.max(fit.width, fit.height) >= Math.max(fit.original.width, fit.original.height)) continue;
  const start = performance.now();
  await fitImage(new Uint8Array(input), opts, wasm);
  const ms = performance.now() - start;
  rows.push(
    `| ${name} | ${fit.width}x${fit.height} q${fit.quality} | ${fit.data.length} | ${fit.decodes} | ${ms.toFixed(0)} | ${(await psnr(input, fit.data)).toFixed(2)} | ${(await psnrAtFull(input, fit.data)).toFixed(2)} |`,
  );
}
console.log(rows.join("\n"));
