/**
 * An upper bound on the isolate memory one fit needs (vision.md: WASM memory + JS heap must stay
 * under a Worker's 128 MB). workerd exposes no heap numbers, so each fit runs in a Node process
 * whose V8 heap is capped (`--max-old-space-size`, a 2 MB semi-space): the smallest cap under which
 * the fit completes bounds the JS heap; the fit itself reports its WASM peak; the ArrayBuffers alive
 * at the end (input included) are added. Same code and .wasm files as in workerd.
 * Run: npm run bench -- vision-memory
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { photoPixels, screenshotPixels } from "../test/fixtures/images";

const CAPS_MB = [8, 12, 16, 24, 32, 48, 64, 96];
const SEMI_SPACE_MB = 2;
const BUDGET = 262_144;

function withAlpha(rgb: Uint8Array): Uint8Array {
  const out = new Uint8Array((rgb.length / 3) * 4);
  for (let p = 0, q = 0; p < rgb.length; p += 3, q += 4) {
    out[q] = rgb[p]!;
    out[q + 1] = rgb[p + 1]!;
    out[q + 2] = rgb[p + 2]!;
    out[q + 3] = p % 291 === 0 ? 128 : 255;
  }
  return out;
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
  const lines = [
    `| input | smallest V8 old-space cap that completes | WASM peak MB | ArrayBuffers alive at end MB (input incl.) | bound: cap + ${SEMI_SPACE_MB * 3} MB new space + WASM + ArrayBuffers |`,
    "|---|---:|---:|---:|---:|",
  ];
  try {
    for (const [name, bytes] of inputs) {
      const file = join(dir, `${name.replace(/\W+/g, "-")}.img`);
      writeFileSync(file, bytes);
      let row = `| ${name} | > ${CAPS_MB[CAPS_MB.length - 1]} MB | - | - | - |`;
      for (const cap of CAPS_MB) {
        const child = spawnSync(process.execPath, [`--max-old-space-size=${cap}`, `--max-semi-space-size=${SEMI_SPACE_MB}`, "--import", "tsx", "bench/vision-memory-child.ts", file, String(BUDGET)], { encoding: "utf8", timeout: 120_000 });
        if (child.status !== 0) continue;
        const report = JSON.parse(child.stdout.trim().split("\n").pop()!) as { wasmPeakBytes: number; arrayBuffersBytes: number };
        const wasmMB = report.wasmPeakBytes / 2 ** 20;
        const buffersMB = report.arrayBuffersBytes / 2 ** 20;
        row = `| ${name} | ${cap} MB | ${wasmMB.toFixed(1)} | ${buffersMB.toFixed(1)} | ${(cap + SEMI_SPACE_MB * 3 + wasmMB + buffersMB).toFixed(1)} MB |`;
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
