/**
 * An upper bound on the isolate memory one fit needs (docs/vision.md, "Formats and limits": WASM memory + JS heap must stay
 * under a Worker's 128 MB). workerd exposes no heap numbers, so each fit runs in a Node process
 * whose V8 heap is capped (`--max-old-space-size`, a 2 MB semi-space): the smallest cap under which
 * the fit completes bounds the JS heap; the fit itself reports its WASM peak; the ArrayBuffers alive
 * at the end (input included) are added. Same code and .wasm files as in workerd.
 * The adversarial set (issue #9: containers that lie about their frame, a second IHDR,
 * decompression and scan bombs, the largest files the limits let through to photon and TurboJPEG)
 * runs the same way; a refusal is an outcome, and the CPU time of each fit or refusal is reported.
 * Run: npm run bench -- vision-memory
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { ihdr, photoPixels, screenshotPixels, withAlpha } from "../test/fixtures/images";
import { firstWebpChunk, jpegManyScans, pngOf, repeatSmallestScan, vp8x, webpOf, zerosDeflated } from "../test/fixtures/hostile";
import { JPEG_MAX_SCANS } from "../shared/media/image-header";

const CAPS_MB = [8, 12, 16, 24, 32, 48, 64, 96];
const SEMI_SPACE_MB = 2;
const BUDGET = 262_144;

type Raw = (rgb: Uint8Array, width: number, height: number) => ReturnType<typeof sharp>;

/** Sets a GIF's logical screen size (bytes 6..9), leaving its frames as they are. */
function withGifScreen(gif: Uint8Array, width: number, height: number): Uint8Array {
  const out = gif.slice();
  out.set([width & 0xff, width >> 8, height & 0xff, height >> 8], 6);
  return out;
}

/** The hostile files of issue #9 and the largest honest ones the limits admit, per decoder. */
async function adversarialInputs(raw: Raw): Promise<Array<[string, Uint8Array]>> {
  const flat = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 120, b: 40 } } });
  const lossless8000 = new Uint8Array(await flat(8000, 8000).webp({ lossless: true }).toBuffer());
  const gif8000 = new Uint8Array(await flat(8000, 8000).gif().toBuffer());
  // 900 MB of zero rows deflate to under 1 MB; one stream serves the three PNG bombs.
  const zeros = await zerosDeflated(30001 * 30000);
  const iend: [string, Uint8Array] = ["IEND", new Uint8Array(0)];
  const photo = (w: number, h: number) => raw(photoPixels(w, h), w, h);
  const progressive = new Uint8Array(await photo(3840, 3840).jpeg({ quality: 92, progressive: true }).toBuffer());
  return [
    ["WebP: 1x1 VP8X canvas around an 8000x8000 VP8L frame", webpOf([["VP8X", vp8x(1, 1)], firstWebpChunk(lossless8000)])],
    ["GIF: 1x1 logical screen around an 8000x8000 frame", withGifScreen(gif8000, 1, 1)],
    ["PNG: 1x1, then a second IHDR of 4294967295x1", pngOf([["IHDR", ihdr(1, 1, 2)], ["IHDR", ihdr(4294967295, 1, 2)], ["IDAT", zeros.subarray(0, 16)], iend])],
    ["PNG: 1x1, then a second IHDR of 30000x30000 and 900 MB of zero rows", pngOf([["IHDR", ihdr(1, 1, 0)], ["IHDR", ihdr(30000, 30000, 0)], ["IDAT", zeros], iend])],
    ["PNG: 30000x30000 gray zeros (bomb)", pngOf([["IHDR", ihdr(30000, 30000, 0)], ["IDAT", zeros], iend])],
    ["PNG: 1x1 whose zlib stream inflates to 900 MB", pngOf([["IHDR", ihdr(1, 1, 0)], ["IDAT", zeros], iend])],
    ["PNG: 3840x3840 RGBA zeros (at max_input_pixels)", new Uint8Array(await sharp({ create: { width: 3840, height: 3840, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer())],
    [`JPEG: ${JPEG_MAX_SCANS + 1} empty scans (scan bomb, 1 KB)`, jpegManyScans(JPEG_MAX_SCANS + 1)],
    ["JPEG: 3840x3840 progressive photo (at max_input_pixels)", progressive],
    [`JPEG: the same padded to ${JPEG_MAX_SCANS} scans (the scan limit)`, repeatSmallestScan(progressive, JPEG_MAX_SCANS)],
    ["JPEG: the same padded to 100 scans (past the limit)", repeatSmallestScan(progressive, 100)],
    ["PNG: 2448x2448 interlaced photo (photon cap)", new Uint8Array(await photo(2448, 2448).png({ progressive: true }).toBuffer())],
    ["GIF: 2448x2448 photo (photon cap)", new Uint8Array(await photo(2448, 2448).gif().toBuffer())],
    ["WebP: 2448x2448 lossy photo (photon cap)", new Uint8Array(await photo(2448, 2448).webp({ quality: 90 }).toBuffer())],
  ];
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "vision-memory-"));
  const raw = (rgb: Uint8Array, width: number, height: number) => sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
  const inputs: Array<[string, Buffer]> = [
    ["12 MP photo JPEG 4032x3024", await raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92 }).toBuffer()],
    ["12 MP photo, progressive JPEG", await raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92, progressive: true }).toBuffer()],
    ["5K screenshot PNG 5120x2880", await raw(screenshotPixels(5120, 2880), 5120, 2880).png().toBuffer()],
    ["5K screenshot PNG, RGBA adaptive-filtered", await sharp(Buffer.from(withAlpha(screenshotPixels(5120, 2880))), { raw: { width: 5120, height: 2880, channels: 4 } }).png({ adaptiveFiltering: true }).toBuffer()],
  ];
  const adversarial = await adversarialInputs(raw);
  const lines = [
    `| input | file KB | outcome | CPU ms | smallest V8 old-space cap that completes | WASM peak MB | ArrayBuffers alive at end MB (input incl.) | bound: cap + ${SEMI_SPACE_MB * 3} MB new space + WASM + ArrayBuffers |`,
    "|---|---:|---|---:|---:|---:|---:|---:|",
  ];
  try {
    for (const [name, bytes] of [...inputs, ...adversarial]) {
      const file = join(dir, `${name.replace(/\W+/g, "-")}.img`);
      writeFileSync(file, bytes);
      let row = `| ${name} | ${(bytes.length / 1024).toFixed(1)} | - | - | > ${CAPS_MB[CAPS_MB.length - 1]} MB | - | - | - | - |`;
      for (const cap of CAPS_MB) {
        const child = spawnSync(process.execPath, [`--max-old-space-size=${cap}`, `--max-semi-space-size=${SEMI_SPACE_MB}`, "--import", "tsx", "bench/vision-memory-child.ts", file, String(BUDGET)], { encoding: "utf8", timeout: 120_000 });
        if (child.status !== 0) continue;
        const report = JSON.parse(child.stdout.trim().split("\n").pop()!) as { outcome: string; cpuMs: number; wasmPeakBytes?: number; arrayBuffersBytes: number };
        const wasmMB = report.wasmPeakBytes === undefined ? undefined : report.wasmPeakBytes / 2 ** 20;
        const buffersMB = Math.max(0, report.arrayBuffersBytes / 2 ** 20);
        const bound = wasmMB === undefined ? "- (refused)" : `${(cap + SEMI_SPACE_MB * 3 + wasmMB + buffersMB).toFixed(1)} MB`;
        row = `| ${name} | ${(bytes.length / 1024).toFixed(1)} | ${report.outcome} | ${report.cpuMs.toFixed(0)} | ${cap} MB | ${wasmMB === undefined ? "-" : wasmMB.toFixed(1)} | ${buffersMB.toFixed(1)} | ${bound} |`;
        break;
      }
      lines.push(row);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
