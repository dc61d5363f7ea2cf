/**
 * Profiling helper for the vision fit (Node): builds the bench inputs once (cached in $TMPDIR) and
 * times fitImage on each, so `node --cpu-prof --import tsx bench/vision-profile.ts` shows where the
 * time goes (SIMD=0 drops our SIMD module: the JS fallback). Not a benchmark: the numbers that
 * count are bench/vision.bench.ts's, in workerd.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { fitImage } from "../shared/vision/fit";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { photoPixels, screenshotPixels } from "../test/fixtures/images";

const { simd, ...withoutSimd } = loadVisionWasmNode();
const wasm = process.env.SIMD === "0" ? withoutSimd : { ...withoutSimd, simd };
const raw = (rgb: Uint8Array, width: number, height: number) => sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
const inputs: Array<[string, () => Promise<Buffer>]> = [
  ["photo12", () => raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92 }).toBuffer()],
  ["shot5k", () => raw(screenshotPixels(5120, 2880), 5120, 2880).png().toBuffer()],
  ["phone", () => raw(screenshotPixels(1170, 2532, 5), 1170, 2532).png().toBuffer()],
  ["photo3", () => raw(photoPixels(2048, 1536, 3), 2048, 1536).jpeg({ quality: 92 }).toBuffer()],
];
const only = process.argv.slice(2);
const runs = Number(process.env.RUNS ?? 3);
for (const [name, make] of inputs) {
  if (only.length && !only.includes(name)) continue;
  const file = join(tmpdir(), `vision-profile-${name}.bin`);
  if (!existsSync(file)) writeFileSync(file, await make());
  const bytes = new Uint8Array(readFileSync(file));
  for (const budget of [256 * 1024, 1024 * 1024]) {
    const times: number[] = [];
    let last;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      last = await fitImage(bytes, { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 }, wasm);
      times.push(performance.now() - t);
    }
    console.log(`${name} ${budget / 1024} KiB: ${times.map((t) => t.toFixed(0)).join(" ")} ms, ${last!.width}x${last!.height} q${last!.quality} encodes ${last!.encodeAttempts} bytes ${last!.dataUrlBytes}`);
  }
}
