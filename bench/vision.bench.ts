/**
 * Vision fit bench, one run, same inputs and budgets side by side: our fit running inside workerd
 * (a bench-only Worker, bench/vision-worker, started here with `wrangler dev`), with and without our
 * SIMD kernels (baseline encoder) and with MozJPEG, vs the same algorithm on sharp (native libvips,
 * in Node) vs the old halving ladder (photon in Node). Run: npm run bench -- vision (re-spawns itself with --expose-gc).
 * Times are request round trips on loopback (workerd's clock only moves on I/O), after a warm-up.
 */
import { spawnSync } from "node:child_process";
import sharp from "sharp";
import * as photon from "@cf-wasm/photon";
import { fitImage, dataUrlLength, searchQuality, QUALITY_MIN } from "../shared/vision/fit";
import type { FitResult } from "../shared/ports";
import type { JpegEncodeSettings } from "../shared/vision/jpeg.settings";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { median } from "./stats";
import { startWorker } from "./vision-worker/start";
import { photoPixels, screenshotPixels, withAlpha } from "../test/fixtures/images";

if (!(globalThis as { gc?: unknown }).gc) {
  // The JS-heap column needs a GC before each call: re-run this file under node --expose-gc.
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}
const wasm = loadVisionWasmNode();
const { simd: _simd, ...wasmWithoutSimd } = wasm;
const MAX_EDGE = 1568;
const ALL = process.argv.includes("--all");
let retries = 0;
const gc = (globalThis as unknown as { gc: () => void }).gc;

interface Row { input: string; budget: string; method: string; ms: number; attempts: number; bytes: number; dims: string; psnr: number; wasmMB?: number; jsMB?: number; nodeMs?: number }

interface WorkerFit { attempts: number; dataUrlBytes: number; width: number; height: number; quality?: number; wasmPeakBytes: number; simd: boolean }

async function inWorkerd(url: string, input: Buffer, budget: number, encoder: string, simd: boolean): Promise<{ fit: WorkerFit; data: Uint8Array; ms: number }> {
  let t = performance.now();
  const post = () => fetch(`${url}/?budget=${budget}&encoder=${encoder}&simd=${simd ? 1 : 0}`, { method: "POST", body: new Uint8Array(input) });
  let response = await post().catch((error: unknown) => new Response(String(error), { status: 599 }));
  if (response.status === 599 || response.status === 503) {
    // wrangler dev restarts a workerd that dropped the request; say so, and time the retry.
    retries++;
    console.error(`retrying after workerd dropped the request (${response.status}: ${(await response.text()).slice(0, 80)})`);
    await new Promise((r) => setTimeout(r, 3000));
    t = performance.now();
    response = await post();
  }
  const data = new Uint8Array(await response.arrayBuffer());
  const ms = performance.now() - t;
  if (!response.ok) throw new Error(`worker answered ${response.status}: ${new TextDecoder().decode(data)}`);
  return { fit: JSON.parse(response.headers.get("x-fit")!) as WorkerFit, data, ms };
}

/** Doubles each channel's distance from mid-grey: the saturated colours where P3 and sRGB differ. */
function saturated(rgb: Uint8Array): Uint8Array {
  return rgb.map((v) => Math.max(0, Math.min(255, (v - 128) * 2 + 128)));
}

async function makeInputs(): Promise<Array<[string, Buffer]>> {
  const raw = (rgb: Uint8Array, width: number, height: number) => sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
  return [
    ["12 MP photo JPEG 4032x3024", await raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92 }).toBuffer()],
    ["5K screenshot PNG 5120x2880", await raw(screenshotPixels(5120, 2880), 5120, 2880).png().toBuffer()],
    ["phone table PNG 1170x2532", await raw(screenshotPixels(1170, 2532, 5), 1170, 2532).png().toBuffer()],
    // What screenshot tools write: RGBA, libpng's adaptive row filters (sharp's default is filter None).
    ["5K screenshot PNG 5120x2880, RGBA adaptive-filtered", await sharp(Buffer.from(withAlpha(screenshotPixels(5120, 2880))), { raw: { width: 5120, height: 2880, channels: 4 } }).png({ adaptiveFiltering: true }).toBuffer()],
    ["3 MP photo JPEG 2048x1536", await raw(photoPixels(2048, 1536, 3), 2048, 1536).jpeg({ quality: 92 }).toBuffer()],
    // Widths and heights that do not divide by 8 (where an n/8 decode mapped by size ratio drifts),
    // and 3136, whose half is exactly the cap (where a DCT scale of 4/8 left Lanczos nothing to do).
    ["photo JPEG 3005x2007", await raw(photoPixels(3005, 2007, 5), 3005, 2007).jpeg({ quality: 92 }).toBuffer()],
    ["photo JPEG 2725x2225", await raw(photoPixels(2725, 2225, 6), 2725, 2225).jpeg({ quality: 92 }).toBuffer()],
    ["photo JPEG 3136x2352", await raw(photoPixels(3136, 2352, 7), 3136, 2352).jpeg({ quality: 92 }).toBuffer()],
    ["JPEG screenshot 4704x2646", await raw(screenshotPixels(4704, 2646, 8), 4704, 2646).jpeg({ quality: 90 }).toBuffer()],
    // What iPhones and Macs write: Display P3 (sharp embeds its P3 profile and converts to it).
    ["Display P3 photo JPEG 4032x3024", await raw(saturated(photoPixels(4032, 3024, 9)), 4032, 3024).withIccProfile("p3").jpeg({ quality: 92 }).toBuffer()],
    ["Display P3 screenshot PNG 2940x1912", await raw(screenshotPixels(2940, 1912, 10), 2940, 1912).withIccProfile("p3").png().toBuffer()],
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

/** The same fit in Node, only for the JS-heap column (workerd exposes no heap numbers). */
async function ours(input: Buffer, budget: number, settings: JpegEncodeSettings, simd: boolean): Promise<{ r: FitResult; jsMB: number; nodeMs: number }> {
  gc();
  const before = process.memoryUsage();
  const started = performance.now();
  const r = await fitImage(new Uint8Array(input), { embedTargetBytes: budget, maxLongEdge: MAX_EDGE, maxInputPixels: 16_777_216 }, simd ? wasm : wasmWithoutSimd, settings);
  const after = process.memoryUsage();
  // JS-side allocations still held at the end of the call (no GC in between), excluding WASM memories.
  const jsMB = (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers - r.wasmPeakBytes) / 2 ** 20;
  return { r, jsMB, nodeMs: performance.now() - started };
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
const decodeRows: Array<{ input: string; inflate: number; simd: number; js: number }> = [];
const inputs = await makeInputs();
const worker = await startWorker();
try {
  // Warm-up: the first request compiles the WASM modules and JITs the JS.
  await inWorkerd(worker.url, inputs[3]![1], 262144, "baseline", true);
  if (ALL) {
    await inWorkerd(worker.url, inputs[3]![1], 262144, "baseline", false);
    await inWorkerd(worker.url, inputs[3]![1], 262144, "mozjpeg", false);
  }
  for (const [name, input] of inputs) {
    for (const budget of [64 * 1024, 256 * 1024, 1024 * 1024]) {
      const budgetLabel = `${budget / 1024} KiB`;
      const methods = [
        ["ours in workerd (SIMD kernels, baseline encoder)", "baseline", true],
        // The JS-kernel and MozJPEG columns (earlier comparisons) cost most of the run: --all adds them.
        ...(ALL ? [["ours in workerd (JS kernels, baseline encoder; before)", "baseline", false], ["ours in workerd (MozJPEG, JS resampler)", "mozjpeg", false]] as const : []),
      ] as const;
      for (const [label, encoder, simd] of methods) {
        const { fit, data, ms } = await inWorkerd(worker.url, input, budget, encoder, simd);
        if (fit.simd !== simd) throw new Error(`${label}: the worker reported simd=${fit.simd}`);
        const { jsMB, nodeMs } = await ours(input, budget, { encoder, progressive: false, trellis: false }, simd);
        rows.push({ input: name, budget: budgetLabel, method: label, ms, attempts: fit.attempts, bytes: fit.dataUrlBytes, dims: `${fit.width}x${fit.height} q${fit.quality}`, psnr: await psnr(input, data), wasmMB: fit.wasmPeakBytes / 2 ** 20, jsMB, nodeMs });
      }
      let t = performance.now();
      const s = await withSharp(input, budget);
      rows.push({ input: name, budget: budgetLabel, method: "sharp, same algorithm (Node)", ms: performance.now() - t, attempts: s.attempts, bytes: dataUrlLength("image/jpeg", s.data.length), dims: `${s.width}x${s.height}`, psnr: await psnr(input, s.data) });
      t = performance.now();
      const l = halvingLadder(input, budget);
      rows.push({ input: name, budget: budgetLabel, method: "old ladder (photon 85/70/50, halve; Node)", ms: performance.now() - t, attempts: l.attempts, bytes: dataUrlLength("image/jpeg", l.data.length), dims: `${l.width}x${l.height}`, psnr: await psnr(input, l.data) });
      console.error(`done ${name} ${budgetLabel}`);
    }
    if (name.includes("PNG") && !name.includes("P3")) {
      const time = async (query: string) => {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          const t = performance.now();
          const response = await fetch(`${worker.url}/?${query}`, { method: "POST", body: new Uint8Array(input) });
          await response.arrayBuffer();
          if (!response.ok) throw new Error(`worker answered ${response.status} to ${query}`);
          times.push(performance.now() - t);
        }
        return median(times);
      };
      decodeRows.push({ input: name, inflate: await time("mode=inflate"), simd: await time("mode=decode&simd=1"), js: await time("mode=decode&simd=0") });
    }
  }
} finally {
  worker.stop();
}

console.log("| input | budget | method | time ms | encodes | data: URL bytes | output | PSNR dB | WASM peak MB | JS held MB |");
console.log("|---|---|---|---:|---:|---:|---|---:|---:|---:|");
for (const r of rows) {
  console.log(`| ${r.input} | ${r.budget} | ${r.method} | ${r.ms.toFixed(0)} | ${r.attempts} | ${r.bytes} | ${r.dims} | ${r.psnr.toFixed(2)} | ${r.wasmMB?.toFixed(1) ?? "-"} | ${r.jsMB?.toFixed(1) ?? "-"} |`);
}
console.log("\n| PNG input | inflate only ms | decode, SIMD unfilter/flatten ms | decode, JS unfilter/flatten (before) ms |");
console.log("|---|---:|---:|---:|");
for (const d of decodeRows) console.log(`| ${d.input} | ${d.inflate.toFixed(0)} | ${d.simd.toFixed(0)} | ${d.js.toFixed(0)} |`);
const byMethod = new Map<string, Row[]>();
for (const r of rows) byMethod.set(r.method, [...(byMethod.get(r.method) ?? []), r]);
const sharpRows = byMethod.get("sharp, same algorithm (Node)")!;
console.log("\n| method | median encodes | max encodes | time / sharp (median) | PSNR − sharp (median dB) |");
console.log("|---|---:|---:|---:|---:|");
for (const [method, list] of byMethod) {
  const ratios = list.map((r, i) => r.ms / sharpRows[i]!.ms);
  const gains = list.map((r, i) => r.psnr - sharpRows[i]!.psnr);
  console.log(`| ${method} | ${median(list.map((r) => r.attempts))} | ${Math.max(...list.map((r) => r.attempts))} | ${median(ratios).toFixed(2)}x | ${median(gains) >= 0 ? "+" : ""}${median(gains).toFixed(2)} |`);
}

const oursRows = byMethod.get("ours in workerd (SIMD kernels, baseline encoder)")!;
// The same fit in Node runs next to sharp's (same process, same moment): a ratio that the load of
// a shared box distorts less than the workerd round trip.
const nodeRatios = oursRows.map((r, i) => r.nodeMs! / sharpRows[i]!.ms);
if (retries > 0) console.log(`\n(${retries} request(s) retried after workerd dropped the connection)`);
console.log(`\nours in Node / sharp, median over all rows: ${median(nodeRatios).toFixed(2)}x (workerd round trip / sharp: ${median(oursRows.map((r, i) => r.ms / sharpRows[i]!.ms)).toFixed(2)}x)`);
console.log("\n| input | budget | ours output | sharp output | PSNR ours − sharp dB | time ours / sharp (workerd) | time ours / sharp (Node) |");
console.log("|---|---|---|---|---:|---:|---:|");
oursRows.forEach((r, i) => {
  const s = sharpRows[i]!;
  const gain = r.psnr - s.psnr;
  console.log(`| ${r.input} | ${r.budget} | ${r.dims} | ${s.dims} | ${gain >= 0 ? "+" : ""}${gain.toFixed(2)} | ${(r.ms / s.ms).toFixed(2)}x | ${(r.nodeMs! / s.ms).toFixed(2)}x |`);
});
