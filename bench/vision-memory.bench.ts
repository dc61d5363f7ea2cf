/**
 * An upper bound on the isolate memory one fit needs (docs/vision.md, "Formats and limits": WASM memory + JS heap must stay
 * under a Worker's 128 MB). workerd exposes no heap numbers, so each fit runs in a Node process
 * whose V8 heap is capped (`--max-old-space-size`, a 2 MB semi-space): the smallest cap under which
 * the fit completes bounds the JS heap; the fit itself reports its WASM peak; the ArrayBuffers alive
 * at the end (input included) are added. The process's peak RSS (its own VmHWM) above that of a 1x1 fit is
 * reported too: it also holds what the bound misses, ArrayBuffers that lived only during the fit
 * (a decoder's row buffers). Same code and .wasm files as in workerd.
 * The adversarial set (issue #9: containers that lie about their frame, a second IHDR,
 * decompression and scan bombs, the largest files the limits let through to each decoder)
 * runs the same way; a refusal is an outcome, and the CPU time of each fit or refusal is reported.
 * Run: npm run bench -- vision-memory (VISION_MEMORY_ONLY=<text>: only the rows whose name has it;
 * VISION_MEMORY_BUDGET=<bytes>: the embed budget, 262144 unless set)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { ihdr, photoPixels, screenshotPixels, withAlpha } from "../test/fixtures/images";
import {
  firstWebpChunk,
  jpegManyScans,
  pngOf,
  repeatSmallestScan,
  vp8x,
  webpOf,
  zerosDeflated,
} from "../test/fixtures/hostile";
import { JPEG_MAX_SCANS } from "../shared/media/image-header";

const CAPS_MB = [8, 12, 16, 24, 32, 48, 64, 96];
const SEMI_SPACE_MB = 2;
/** The embed budget of every fit; VISION_MEMORY_BUDGET=4194304 measures the 4:4:4 path on screenshots (docs/benchmarks.md). */
const BUDGET = Number(process.env.VISION_MEMORY_BUDGET ?? 262_144);

type Raw = (rgb: Uint8Array, width: number, height: number) => ReturnType<typeof sharp>;

/** Sets a GIF's logical screen size (bytes 6..9), leaving its frames as they are. */
function withGifScreen(gif: Uint8Array, width: number, height: number): Uint8Array {
  const out = gif.slice();
  out.set([width & 0xff, width >> 8, height & 0xff, height >> 8], 6);
  return out;
}

/** `make` run once, when first asked (the inputs are built only for the rows a run measures). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

type Input = [string, () => Promise<Uint8Array>];

/** The hostile files of issue #9 and the largest honest ones the limits admit, per decoder. */
function adversarialInputs(raw: Raw): Input[] {
  const flat = (width: number, height: number) =>
    sharp({ create: { width, height, channels: 3, background: { r: 200, g: 120, b: 40 } } });
  const lossless8000 = once(async () => new Uint8Array(await flat(8000, 8000).webp({ lossless: true }).toBuffer()));
  const gif8000 = once(async () => new Uint8Array(await flat(8000, 8000).gif().toBuffer()));
  // 900 MB of zero rows deflate to under 1 MB; one stream serves the three PNG bombs.
  const zeros = once(() => zerosDeflated(30001 * 30000));
  const iend: [string, Uint8Array] = ["IEND", new Uint8Array(0)];
  const photo = (w: number, h: number) => raw(photoPixels(w, h), w, h);
  const bytesOf = async (image: ReturnType<typeof sharp>) => new Uint8Array(await image.toBuffer());
  const progressive = once(() => bytesOf(photo(3840, 3840).jpeg({ quality: 92, progressive: true })));
  return [
    [
      "WebP: 1x1 VP8X canvas around an 8000x8000 VP8L frame",
      async () => webpOf([["VP8X", vp8x(1, 1)], firstWebpChunk(await lossless8000())]),
    ],
    ["GIF: 1x1 logical screen around an 8000x8000 frame", async () => withGifScreen(await gif8000(), 1, 1)],
    [
      "PNG: 1x1, then a second IHDR of 4294967295x1",
      async () =>
        pngOf([
          ["IHDR", ihdr(1, 1, 2)],
          ["IHDR", ihdr(4294967295, 1, 2)],
          ["IDAT", (await zeros()).subarray(0, 16)],
          iend,
        ]),
    ],
    [
      "PNG: 1x1, then a second IHDR of 30000x30000 and 900 MB of zero rows",
      async () => pngOf([["IHDR", ihdr(1, 1, 0)], ["IHDR", ihdr(30000, 30000, 0)], ["IDAT", await zeros()], iend]),
    ],
    [
      "PNG: 30000x30000 gray zeros (bomb)",
      async () => pngOf([["IHDR", ihdr(30000, 30000, 0)], ["IDAT", await zeros()], iend]),
    ],
    [
      "PNG: 1x1 whose zlib stream inflates to 900 MB",
      async () => pngOf([["IHDR", ihdr(1, 1, 0)], ["IDAT", await zeros()], iend]),
    ],
    [
      "PNG: 3840x3840 RGBA zeros (at max_input_pixels)",
      () =>
        bytesOf(
          sharp({
            create: { width: 3840, height: 3840, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
          }).png(),
        ),
    ],
    [`JPEG: ${JPEG_MAX_SCANS + 1} empty scans (scan bomb, 1 KB)`, async () => jpegManyScans(JPEG_MAX_SCANS + 1)],
    ["JPEG: 3840x3840 progressive photo (at max_input_pixels)", progressive],
    [
      `JPEG: the same padded to ${JPEG_MAX_SCANS} scans (the scan limit)`,
      async () => repeatSmallestScan(await progressive(), JPEG_MAX_SCANS),
    ],
    ["JPEG: the same padded to 100 scans (past the limit)", async () => repeatSmallestScan(await progressive(), 100)],
    [
      "PNG: 3840x3840 interlaced RGBA screenshot (at max_input_pixels)",
      () =>
        bytesOf(
          sharp(Buffer.from(withAlpha(screenshotPixels(3840, 3840))), {
            raw: { width: 3840, height: 3840, channels: 4 },
          }).png({ progressive: true }),
        ),
    ],
    [
      "PNG: 3000x3000 interlaced photo (the largest under the 25 MiB upload limit)",
      () => bytesOf(photo(3000, 3000).png({ progressive: true })),
    ],
    ["GIF: 3840x3840 photo (at max_input_pixels)", () => bytesOf(photo(3840, 3840).gif())],
    [
      "GIF: 3840x3840 interlaced photo (at max_input_pixels)",
      () => bytesOf(photo(3840, 3840).gif({ progressive: true })),
    ],
    ["WebP: 3840x3840 lossy photo (at max_input_pixels)", () => bytesOf(photo(3840, 3840).webp({ quality: 90 }))],
    [
      "WebP: 3840x3840 lossless RGBA screenshot (at max_input_pixels)",
      () =>
        bytesOf(
          sharp(Buffer.from(withAlpha(screenshotPixels(3840, 3840))), {
            raw: { width: 3840, height: 3840, channels: 4 },
          }).webp({ lossless: true }),
        ),
    ],
  ];
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "vision-memory-"));
  const raw = (rgb: Uint8Array, width: number, height: number) =>
    sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
  const encoded = (image: ReturnType<typeof sharp>) => async () => new Uint8Array(await image.toBuffer());
  const inputs: Input[] = [
    ["12 MP photo JPEG 4032x3024", encoded(raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92 }))],
    [
      "12 MP photo, progressive JPEG",
      encoded(raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92, progressive: true })),
    ],
    ["5K screenshot PNG 5120x2880", encoded(raw(screenshotPixels(5120, 2880), 5120, 2880).png())],
    [
      "5K screenshot PNG, RGBA adaptive-filtered",
      encoded(
        sharp(Buffer.from(withAlpha(screenshotPixels(5120, 2880))), {
          raw: { width: 5120, height: 2880, channels: 4 },
        }).png({ adaptiveFiltering: true }),
      ),
    ],
  ];
  // VISION_MEMORY_ONLY=text measures only the rows whose name contains it (e.g. "GIF").
  const only = process.env.VISION_MEMORY_ONLY;
  const rows = [...inputs, ...adversarialInputs(raw)].filter(([name]) => !only || name.includes(only));
  const lines = [
    `| input | file KB | outcome | CPU ms | smallest V8 old-space cap that completes | WASM peak MB | ArrayBuffers alive at end MB (input incl.) | bound: cap + ${SEMI_SPACE_MB * 3} MB new space + WASM + ArrayBuffers | peak RSS above a 1x1 fit MB |`,
    "|---|---:|---|---:|---:|---:|---:|---:|---:|",
  ];
  /** One fit in a child capped at `cap` MB of old space; undefined when it ran out of heap. */
  const run = (file: string, cap: number) => {
    const child = spawnSync(
      process.execPath,
      [
        `--max-old-space-size=${cap}`,
        `--max-semi-space-size=${SEMI_SPACE_MB}`,
        "--import",
        "tsx",
        "bench/vision-memory-child.ts",
        file,
        String(BUDGET),
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    if (child.status !== 0) return undefined;
    return JSON.parse(child.stdout.trim().split("\n").pop()!) as {
      outcome: string;
      cpuMs: number;
      wasmPeakBytes?: number;
      arrayBuffersBytes: number;
      maxRssBytes: number;
    };
  };
  try {
    // The process's peak resident memory with modules loaded and a 1x1 PNG fitted: what every row's RSS is above.
    const baselineFile = join(dir, "baseline.png");
    writeFileSync(
      baselineFile,
      pngOf([
        ["IHDR", ihdr(1, 1, 2)],
        ["IDAT", await zerosDeflated(4)],
        ["IEND", new Uint8Array(0)],
      ]),
    );
    const baseline = CAPS_MB.map((cap) => run(baselineFile, cap)).find((r) => r)!.maxRssBytes;
    for (const [name, make] of rows) {
      const bytes = await make();
      const file = join(dir, `${name.replace(/\W+/g, "-")}.img`);
      writeFileSync(file, bytes);
      let row = `| ${name} | ${(bytes.length / 1024).toFixed(1)} | - | - | > ${CAPS_MB[CAPS_MB.length - 1]} MB | - | - | - | - |`;
      for (const cap of CAPS_MB) {
        const report = run(file, cap);
        if (!report) continue;
        const wasmMB = report.wasmPeakBytes === undefined ? undefined : report.wasmPeakBytes / 2 ** 20;
        const buffersMB = Math.max(0, report.arrayBuffersBytes / 2 ** 20);
        const bound =
          wasmMB === undefined ? "- (refused)" : `${(cap + SEMI_SPACE_MB * 3 + wasmMB + buffersMB).toFixed(1)} MB`;
        row = `| ${name} | ${(bytes.length / 1024).toFixed(1)} | ${report.outcome} | ${report.cpuMs.toFixed(0)} | ${cap} MB | ${wasmMB === undefined ? "-" : wasmMB.toFixed(1)} | ${buffersMB.toFixed(1)} | ${bound} | ${((report.maxRssBytes - baseline) / 2 ** 20).toFixed(1)} |`;
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
