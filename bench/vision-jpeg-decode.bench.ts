/**
 * JPEG decode alone, ours against libvips's, side by side in one run: our libjpeg-turbo build
 * (shared/imaging/wasm/jpeg.decode.wasm, WASM with auto-vectorisation, rows handed to a sink that
 * drops them) and sharp's native libjpeg-turbo (SIMD, one libvips thread), on the vision bench's
 * JPEG inputs. Ours at full size (8/8), at the DCT scale a fit to 1568 px picks with its margin and
 * at the one it picks for a coarse output (a low budget: DecodeDetail, shared/imaging/codecs/codec.ts);
 * sharp at full size. Also ours at 1/8, which is the entropy decode and little else: the floor no
 * DCT scale goes under.
 * Run: npm run bench -- vision-jpeg-decode   (RUNS=n, default 5; the least of n is reported)
 */
import sharp from "sharp";
import { decodeJpegRows, jpegDctEighths } from "../shared/imaging/codecs/jpeg/jpeg.decode";
import type { StreamingResampler } from "../shared/imaging/resample";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { makeInputs } from "./vision-inputs";

const wasm = loadVisionWasmNode();
const runs = Number(process.env.RUNS ?? 5);
const CAP = 1568;
sharp.concurrency(1);

const sink = { pushRow: () => undefined, wantsRow: () => true } as unknown as StreamingResampler;

async function least(run: () => unknown): Promise<number> {
  await run();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await run();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

console.log(
  "| input | ours 8/8 ms | sharp full ms | ours / sharp (full) | fit's scale | ours at it ms | coarse scale | ours at it ms | ours 1/8 ms |",
);
console.log("|---|---:|---:|---:|---|---:|---|---:|---:|");
for (const [name, buf] of (await makeInputs()).filter(([n]) => n.includes("JPEG"))) {
  const { width = 0, height = 0 } = await sharp(buf).metadata();
  const bytes = new Uint8Array(buf);
  const ours = (eighths: number) =>
    least(() => decodeJpegRows(bytes, width, height, eighths, wasm.jpegDecoder, () => sink, undefined));
  const minScale = CAP / Math.max(width, height);
  const fitEighths = jpegDctEighths(minScale);
  const full = await ours(8);
  const sharpFull = await least(() => sharp(buf).raw().toBuffer());
  const atFit = await ours(fitEighths);
  const coarseEighths = jpegDctEighths(minScale, 1);
  const atCoarse = await ours(coarseEighths);
  const floor = await ours(1);
  console.log(
    `| ${name} | ${full.toFixed(0)} | ${sharpFull.toFixed(0)} | ${(full / sharpFull).toFixed(2)}x | ${fitEighths}/8 | ${atFit.toFixed(0)} | ${coarseEighths}/8 | ${atCoarse.toFixed(0)} | ${floor.toFixed(0)} |`,
  );
}
