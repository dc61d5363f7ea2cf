/**
 * PNG fits in Node with our SIMD kernels: what one chunk walk (order, sizes, every CRC) costs on
 * the file, and the whole fit, at budgets that take one decode and several (each smaller size is
 * decoded from the source again; the chunks are walked once per fit, not once per decode). Run: npm run bench -- vision-png-walk (also part of `-- vision`).
 * Node inflates on its thread pool and the box is shared: medians of RUNS (default 7) fits.
 */
import sharp from "sharp";
import { fitImage } from "../shared/imaging/fit";
import type { FitResult } from "../shared/ports";
import { parseChunks } from "../shared/imaging/codecs/png/png.decode";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { median } from "./stats";
import { photoPixels, screenshotPixels, withAlpha } from "../test/fixtures/images";

const wasm = loadVisionWasmNode();
const runs = Number(process.env.RUNS ?? 7);
const KiB = 1024;

const inputs: Array<[string, Uint8Array]> = [
  [
    "5K screenshot PNG 5120x2880, RGBA adaptive-filtered",
    new Uint8Array(
      await sharp(Buffer.from(withAlpha(screenshotPixels(5120, 2880))), {
        raw: { width: 5120, height: 2880, channels: 4 },
      })
        .png({ adaptiveFiltering: true })
        .toBuffer(),
    ),
  ],
  [
    "photo PNG 2400x1600",
    new Uint8Array(
      await sharp(Buffer.from(photoPixels(2400, 1600, 4)), { raw: { width: 2400, height: 1600, channels: 3 } })
        .png()
        .toBuffer(),
    ),
  ],
];

// Before this change every decode walked (and CRC-checked) the chunks again: `decodes` walks per
// fit, now one; the saving is the walks no longer run, next to the fit they were part of.
console.log(
  "| input | KB | one chunk walk ms | budget | fit ms | encodes | decodes | walks per fit, before → now | walk time saved ms | saved / fit | output |",
);
console.log("|---|---:|---:|---|---:|---:|---:|---|---:|---:|---|");
for (const [name, bytes] of inputs) {
  const walks: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    parseChunks(bytes);
    walks.push(performance.now() - t);
  }
  for (const budget of [64 * KiB, 256 * KiB, 1024 * KiB]) {
    const times: number[] = [];
    let last: FitResult | undefined;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      last = await fitImage(bytes, { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 }, wasm);
      times.push(performance.now() - t);
    }
    const walk = median(walks),
      fit = median(times),
      saved = (last!.decodes - 1) * walk;
    console.log(
      `| ${name} | ${(bytes.length / 1000).toFixed(0)} | ${walk.toFixed(1)} | ${budget / KiB} KiB | ${fit.toFixed(0)} | ${last!.encodeAttempts} | ${last!.decodes} | ${last!.decodes} → 1 | ${saved.toFixed(1)} | ${((100 * saved) / fit).toFixed(1)} % | ${last!.width}x${last!.height} q${last!.quality} |`,
    );
  }
}
