/**
 * The fits that shrink below the long-edge cap (nothing fits at quality 30 at the cap: the 64 KiB
 * pairs of screenshots and the Display P3 photo): size, quality, bytes, decodes, time, and PSNR at
 * the output's size and at the full target size against sharp's Lanczos3 of the original, as
 * bench/vision.bench.ts measures them. Run it at two commits to compare (docs/benchmarks.md,
 * "Shrinking from the cap-size render").
 * Run: npx tsx bench/vision-shrink.ts
 */
import sharp from "sharp";
import { fitImage } from "../shared/vision/fit";
import { makeInputs } from "./vision-inputs";
import { loadVisionWasmNode } from "./vision-wasm-node";

const wasm = loadVisionWasmNode();
const MAX_EDGE = 1568;
const BUDGET = 64 * 1024;

const referenceAt = (original: Buffer, width: number, height: number) =>
  sharp(original)
    .flatten({ background: "#ffffff" })
    .resize(width, height, { fit: "fill", kernel: "lanczos3" })
    .removeAlpha()
    .raw()
    .toBuffer();

function psnrOf(a: Uint8Array, b: Uint8Array): number {
  let se = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    se += d * d;
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * a.length) / se);
}

async function psnrAtSize(original: Buffer, output: Uint8Array): Promise<number> {
  const out = await sharp(output).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return psnrOf(await referenceAt(original, out.info.width, out.info.height), out.data);
}

async function psnrAtFull(original: Buffer, output: Uint8Array): Promise<number> {
  const meta = await sharp(original).metadata();
  const scale = Math.min(1, MAX_EDGE / Math.max(meta.width!, meta.height!));
  const w = Math.max(1, Math.round(meta.width! * scale));
  const h = Math.max(1, Math.round(meta.height! * scale));
  const shown = await sharp(output).removeAlpha().resize(w, h, { fit: "fill", kernel: "lanczos3" }).raw().toBuffer();
  return psnrOf(await referenceAt(original, w, h), shown);
}

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
    `| ${name} | ${fit.width}x${fit.height} q${fit.quality} | ${fit.data.length} | ${fit.decodes} | ${ms.toFixed(0)} | ${(await psnrAtSize(input, fit.data)).toFixed(2)} | ${(await psnrAtFull(input, fit.data)).toFixed(2)} |`,
  );
}
console.log(rows.join("\n"));
