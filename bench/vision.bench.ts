/**
 * Vision fit bench: our fit (shared/vision, WASM codecs) vs the same algorithm on sharp (native
 * libvips) vs the old halving ladder (photon, qualities 85/70/50, halve on failure), on the same
 * inputs and budgets in one run. Run: node --expose-gc --import tsx bench/vision.bench.ts
 * Our fit runs in Node here (same module as in workerd; WASM memory is measured from the codec
 * instances themselves, which is what the 128 MB isolate limit counts besides the JS heap).
 */
import sharp from "sharp";
import * as photon from "@cf-wasm/photon";
import { fitImage, dataUrlLength, searchQuality, QUALITY_MIN, type FitResult } from "../shared/vision/fit";
import type { JpegEncodeSettings } from "../shared/vision/jpeg.encode";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { photoPixels, screenshotPixels } from "../test/fixtures/images";

const wasm = loadVisionWasmNode();
const MAX_EDGE = 1568;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

interface Row { input: string; budget: string; method: string; ms: number; attempts: number; bytes: number; dims: string; psnr: number; wasmMB?: number; jsMB?: number }

async function makeInputs(): Promise<Array<[string, Buffer]>> {
  const raw = (rgb: Uint8Array, width: number, height: number) => sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
  return [
    ["12 MP photo JPEG 4032x3024", await raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92 }).toBuffer()],
    ["5K screenshot PNG 5120x2880", await raw(screenshotPixels(5120, 2880), 5120, 2880).png().toBuffer()],
    ["phone table PNG 1170x2532", await raw(screenshotPixels(1170, 2532, 5), 1170, 2532).png().toBuffer()],
    ["3 MP photo JPEG 2048x1536", await raw(photoPixels(2048, 1536, 3), 2048, 1536).jpeg({ quality: 92 }).toBuffer()],
  ];
}

/** PSNR (RGB) of `output` against the original resized by sharp (Lanczos3) to the output's size. */
async function psnr(original: Buffer, output: Uint8Array): Promise<number> {
  const out = await sharp(output).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const ref = await sharp(original).flatten({ background: "#ffffff" }).resize(out.info.width, out.info.height, { fit: "fill", kernel: "lanczos3" }).removeAlpha().raw().toBuffer();
  let se = 0;
  for (let i = 0; i < ref.length; i++) { const d = ref[i]! - out.data[i]!; se += d * d; }
  const mse = se / ref.length;
  return mse === 0 ? 99 : 10 * Math.log10((255 * 255) / mse);
}

async function ours(input: Buffer, budget: number, settings: JpegEncodeSettings): Promise<{ r: FitResult; jsMB: number }> {
  gc();
  const before = process.memoryUsage();
  const r = await fitImage(new Uint8Array(input), { embedTargetBytes: budget, maxLongEdge: MAX_EDGE, maxInputPixels: 16_777_216 }, wasm, settings);
  const after = process.memoryUsage();
  // JS-side allocations still held at the end of the call (no GC in between), excluding WASM memories.
  const jsMB = (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers - r.wasmPeakBytes) / 2 ** 20;
  return { r, jsMB };
}

/** The same algorithm on sharp: resize straight to the cap, search quality, shrink by sqrt of the overshoot. */
async function withSharp(input: Buffer, budget: number) {
  const maxBytes = Math.floor((budget - "data:image/jpeg;base64,".length) / 4) * 3;
  const meta = await sharp(input).metadata();
  let scale = Math.min(1, MAX_EDGE / Math.max(meta.width!, meta.height!));
  const counter = { attempts: 0 };
  let guess = 80;
  for (;;) {
    const w = Math.max(1, Math.round(meta.width! * scale)), h = Math.max(1, Math.round(meta.height! * scale));
    const pixels = await sharp(input).flatten({ background: "#ffffff" }).resize(w, h, { fit: "fill", kernel: "lanczos3" }).raw().toBuffer();
    // Encodes are synchronous in the search; sharp is async, so pre-encode lazily through a cache.
    const cache = new Map<number, Uint8Array>();
    const encodeAsync = async (q: number) => new Uint8Array(await sharp(pixels, { raw: { width: w, height: h, channels: 3 } }).jpeg({ quality: q, chromaSubsampling: "4:2:0" }).toBuffer());
    let outcome;
    for (;;) {
      let missing: number | undefined;
      try {
        outcome = searchQuality((q) => { const hit = cache.get(q); if (!hit) { missing = q; throw new Error("miss"); } return hit; }, maxBytes, guess, { attempts: 0 });
      } catch (error) {
        if (missing === undefined) throw error;
      }
      if (missing === undefined) break;
      outcome = undefined;
      cache.set(missing, await encodeAsync(missing));
      counter.attempts++;
    }
    if (outcome?.data) return { data: outcome.data, width: w, height: h, attempts: counter.attempts };
    scale *= Math.sqrt(maxBytes / outcome!.sizeAtMin!) * 0.97;
    guess = QUALITY_MIN + 5;
  }
}

/** The original agent's ladder: halve until it fits, trying 85/70/50 at each size (photon, naive). */
function halvingLadder(input: Buffer, budget: number) {
  const image = photon.PhotonImage.new_from_byteslice(new Uint8Array(input));
  let w = image.get_width(), h = image.get_height();
  let attempts = 0;
  if (Math.max(w, h) > MAX_EDGE) { const s = MAX_EDGE / Math.max(w, h); w = Math.round(w * s); h = Math.round(h * s); }
  for (;;) {
    const resized = photon.resize(image, w, h, photon.SamplingFilter.Lanczos3);
    for (const q of [85, 70, 50]) {
      const data = resized.get_bytes_jpeg(q);
      attempts++;
      if (dataUrlLength("image/jpeg", data.length) <= budget) { resized.free(); image.free(); return { data, width: w, height: h, attempts }; }
    }
    resized.free();
    w = Math.max(1, Math.floor(w / 2)); h = Math.max(1, Math.floor(h / 2));
  }
}

const rows: Row[] = [];
const inputs = await makeInputs();
for (const [name, input] of inputs) {
  for (const budget of [256 * 1024, 1024 * 1024]) {
    const budgetLabel = `${budget / 1024} KiB`;
    for (const [label, settings] of [["ours (baseline)", { progressive: false, trellis: false }], ["ours (progressive+trellis)", { progressive: true, trellis: true }]] as const) {
      const t = performance.now();
      const { r, jsMB } = await ours(input, budget, settings);
      const ms = performance.now() - t;
      rows.push({ input: name, budget: budgetLabel, method: label, ms, attempts: r.encodeAttempts, bytes: r.dataUrlBytes, dims: `${r.width}x${r.height} q${r.quality}`, psnr: await psnr(input, r.data), wasmMB: r.wasmPeakBytes / 2 ** 20, jsMB });
    }
    let t = performance.now();
    const s = await withSharp(input, budget);
    rows.push({ input: name, budget: budgetLabel, method: "sharp, same algorithm", ms: performance.now() - t, attempts: s.attempts, bytes: dataUrlLength("image/jpeg", s.data.length), dims: `${s.width}x${s.height}`, psnr: await psnr(input, s.data) });
    t = performance.now();
    const l = halvingLadder(input, budget);
    rows.push({ input: name, budget: budgetLabel, method: "old ladder (photon 85/70/50, halve)", ms: performance.now() - t, attempts: l.attempts, bytes: dataUrlLength("image/jpeg", l.data.length), dims: `${l.width}x${l.height}`, psnr: await psnr(input, l.data) });
    console.error(`done ${name} ${budgetLabel}`);
  }
}

// Second request does not start from the first one's high-water mark: fresh instances per call.
const first = await ours(inputs[0]![1], 262144, { progressive: false, trellis: false });
const second = await ours(inputs[3]![1], 262144, { progressive: false, trellis: false });

console.log("| input | budget | method | time ms | encodes | data: URL bytes | output | PSNR dB | WASM peak MB | JS held MB |");
console.log("|---|---|---|---:|---:|---:|---|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.input} | ${r.budget} | ${r.method} | ${r.ms.toFixed(0)} | ${r.attempts} | ${r.bytes} | ${r.dims} | ${r.psnr.toFixed(2)} | ${r.wasmMB?.toFixed(1) ?? "-"} | ${r.jsMB?.toFixed(1) ?? "-"} |`);
}
console.log(`\nWASM peak of a 3 MP fit right after a 12 MP fit: ${(second.r.wasmPeakBytes / 2 ** 20).toFixed(1)} MB (the 12 MP fit: ${(first.r.wasmPeakBytes / 2 ** 20).toFixed(1)} MB).`);
