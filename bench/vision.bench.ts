/**
 * Vision fit bench, one run, same inputs and budgets side by side: our fit running inside workerd
 * (a bench-only Worker, bench/vision-worker, started here with `wrangler dev`), with and without our
 * SIMD kernels (baseline encoder) and with MozJPEG, vs the same algorithm on sharp (native libvips,
 * in Node) vs the old halving ladder (photon in Node; with --all). Run: npm run bench -- vision (re-spawns itself with --expose-gc).
 * Times are request round trips on loopback (workerd's clock only moves on I/O), after a warm-up;
 * for the production column and sharp, medians of three (REPEATS=n for more), and workerd's fit
 * time is also given less a header-only round trip of the same body (its upload through wrangler
 * dev). On Linux it also gives the fit's CPU time in workerd (what Workers bill), less a
 * header-only request's, against sharp's.
 * Per pair it also reports PSNR at the full target size (a smaller output scaled back up), the bytes
 * sharp's libjpeg needs at our output's size for our PSNR (bytes-for-equal-PSNR: against sharp's
 * render, and at the full target size against an exact Lanczos-3 of the original), and, for the
 * UI-screenshot corpus (test/fixtures/ui-screenshots.ts), ours against sharp's PNG and JPEG.
 */
import { spawnSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import sharp from "sharp";
import { psnr, psnrAtFull, psnrAtFullExact, psnrOf, referenceAt } from "./vision-psnr";
import * as photon from "@cf-wasm/photon";
import { fitImage } from "../shared/imaging/fit";
import { dataUrlLength } from "../shared/media/data-url";
import type { FitResult } from "../shared/ports";
import type { FitSettings } from "../shared/imaging/jpeg.settings";
import { mozJpegFit } from "./mozjpeg.encode";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { cpuMsSince, median } from "./stats";
import { startWorker } from "./vision-worker/start";
import { BUDGETS, makeInputs, makeUiInputs } from "./vision-inputs";
import { withSharp } from "./vision-sharp";
import { measureScreenshots, printScreenshots, type ScreenshotRow } from "./vision-screenshots";

if (!(globalThis as { gc?: unknown }).gc) {
  // The JS-heap column needs a GC before each call: re-run this file under node --expose-gc.
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", ...process.argv.slice(1)], {
    stdio: "inherit",
  });
  process.exit(child.status ?? 1);
}
const wasm = loadVisionWasmNode();
const { simd: _simd, ...wasmWithoutSimd } = wasm;
const MAX_EDGE = 1568;
const ALL = process.argv.includes("--all");
// Splitting one run over parallel processes (a loaded box): --inputs=0,1,2 picks pairs' inputs by
// index, --no-ui leaves out the UI-screenshot corpus, --ui-only runs only that corpus.
const PICK = process.argv
  .find((a) => a.startsWith("--inputs="))
  ?.slice(9)
  .split(",")
  .map(Number);
// --screenshots-only runs only the typical screenshots (bench/vision-screenshots.ts), --no-screenshots leaves them out.
const SHOTS_ONLY = process.argv.includes("--screenshots-only");
const UI = !process.argv.includes("--no-ui") && !SHOTS_ONLY;
const PAIRS = !process.argv.includes("--ui-only") && !SHOTS_ONLY;
const SHOTS = !process.argv.includes("--no-screenshots");
let retries = 0;
const gc = (globalThis as unknown as { gc: () => void }).gc;

interface Row {
  input: string;
  budget: string;
  method: string;
  ms: number;
  attempts: number;
  bytes: number;
  dims: string;
  psnr: number;
  psnrFull: number;
  /** PSNR at the full target size against an exact Lanczos-3 of the original (the production column and sharp). */
  psnrExact?: number;
  wasmMB?: number;
  jsMB?: number;
  nodeMs?: number;
  /** The production column: the median round trip less the median header-only round trip of the same body. */
  netMs?: number;
  /**
   * CPU ms of one fit: the production column's, workerd's CPU per fit request less its CPU per
   * header-only request of the same body (the upload); sharp's, the bench process's CPU per fit.
   */
  cpuMs?: number;
  /**
   * sharp's CPU ms per fit with our fit's PNG attempt as well (bench/vision-sharp.ts
   * `SharpSteps.png`; PNG sources only, the same as `cpuMs` for a JPEG source).
   */
  cpuWithPngMs?: number;
  /** Our bytes / the bytes sharp needs for our PSNR against its own render (the production column). */
  equalPsnrRatio?: number;
  /** The same with PSNR at the full target size against an exact Lanczos-3 of the original. */
  equalExactPsnrRatio?: number;
  mediaType?: string;
}

interface WorkerFit {
  attempts: number;
  passedThrough: boolean;
  dataUrlBytes: number;
  width: number;
  height: number;
  quality?: number;
  jpegTables?: string;
  chroma?: "4:2:0" | "4:4:4";
  mediaType: string;
  wasmPeakBytes: number;
  simd: boolean;
}

/** How a fit's output reads in the tables: size, then JPEG quality and tables, or PNG. */
function outputLabel(fit: WorkerFit): string {
  return fit.mediaType === "image/png"
    ? `${fit.width}x${fit.height} PNG`
    : `${fit.width}x${fit.height} q${fit.quality} ${fit.jpegTables ?? ""}${fit.chroma === "4:4:4" ? " 4:4:4" : ""}`.trim();
}

async function inWorkerd(
  url: string,
  input: Buffer,
  budget: number,
  encoder: string,
  simd: boolean,
): Promise<{ fit: WorkerFit; data: Uint8Array; ms: number }> {
  let t = performance.now();
  const post = () =>
    fetch(`${url}/?budget=${budget}&encoder=${encoder}&simd=${simd ? 1 : 0}`, {
      method: "POST",
      body: new Uint8Array(input),
    });
  let response = await post().catch((error: unknown) => new Response(String(error), { status: 599 }));
  if (response.status === 599 || response.status === 503) {
    // wrangler dev restarts a workerd that dropped the request; say so, and time the retry.
    retries++;
    console.error(
      `retrying after workerd dropped the request (${response.status}: ${(await response.text()).slice(0, 80)})`,
    );
    await new Promise((r) => setTimeout(r, 3000));
    t = performance.now();
    response = await post();
  }
  const data = new Uint8Array(await response.arrayBuffer());
  const ms = performance.now() - t;
  if (!response.ok) throw new Error(`worker answered ${response.status}: ${new TextDecoder().decode(data)}`);
  return { fit: JSON.parse(response.headers.get("x-fit")!) as WorkerFit, data, ms };
}

/**
 * Bytes sharp's JPEG (libjpeg-turbo, optimised Huffman: sharp's defaults; in `chroma`, our output's)
 * of `pixels` (`width`x`height`) needs to reach `target` dB by `measure`: the lowest quality that
 * reaches it, its bytes interpolated with the quality below by PSNR. Undefined when even quality
 * 100 does not reach it.
 */
async function sharpBytesToReach(
  pixels: Buffer,
  width: number,
  height: number,
  target: number,
  chroma: "4:2:0" | "4:4:4",
  measure: (jpeg: Buffer) => Promise<number>,
): Promise<number | undefined> {
  const at = new Map<number, { bytes: number; psnr: number }>();
  const measured = async (q: number) => {
    let m = at.get(q);
    if (!m) {
      const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } })
        .jpeg({ quality: q, chromaSubsampling: chroma })
        .toBuffer();
      m = { bytes: jpeg.length, psnr: await measure(jpeg) };
      at.set(q, m);
    }
    return m;
  };
  if ((await measured(100)).psnr < target) return undefined;
  let low = 1,
    high = 100; // PSNR(high) >= target
  while (high - low > 1) {
    const mid = (low + high) >> 1;
    if ((await measured(mid)).psnr >= target) high = mid;
    else low = mid;
  }
  const a = await measured(low),
    b = await measured(high);
  if (a.psnr >= target || b.psnr === a.psnr) return b.bytes;
  return a.bytes + ((target - a.psnr) / (b.psnr - a.psnr)) * (b.bytes - a.bytes);
}

/**
 * Bytes sharp needs at our output's size to reach our output's PSNR, two ways: encoding its own
 * Lanczos3 render there, measured against that render (`render`: sharp's pixels are the
 * reference, so our resampler's differences count against us), and the same encodes measured as
 * ours is at the full target size against an exact Lanczos-3 of the original (`exact`: neither
 * resampler is the reference).
 */
async function sharpBytesFor(
  original: Buffer,
  width: number,
  height: number,
  target: { render: number; exact: number },
  chroma: "4:2:0" | "4:4:4" = "4:2:0",
): Promise<{ render?: number; exact?: number }> {
  const ref = await referenceAt(original, width, height);
  const own = async (jpeg: Buffer) => psnrOf(ref, await sharp(jpeg).raw().toBuffer());
  return {
    render: await sharpBytesToReach(ref, width, height, target.render, chroma, own),
    exact: await sharpBytesToReach(ref, width, height, target.exact, chroma, (jpeg) => psnrAtFullExact(original, jpeg)),
  };
}

/**
 * Runs timed a pair for the production column, sharp and Node (medians; the CPU column's mean).
 * REPEATS=n in the environment for steadier medians on a loaded box (default 3).
 */
const REPEATS = Number(process.env.REPEATS ?? 3);

/** A round trip that only reads the image's header: what the upload of `input` costs a request. */
async function headerRoundTrip(url: string, input: Buffer): Promise<number> {
  const t = performance.now();
  const response = await fetch(`${url}/?mode=header`, { method: "POST", body: new Uint8Array(input) });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`worker answered ${response.status} to mode=header`);
  return performance.now() - t;
}

/** The same fit in Node, for the JS-heap column (workerd exposes no heap numbers) and its time. */
async function ours(
  input: Buffer,
  budget: number,
  settings: FitSettings,
  simd: boolean,
): Promise<{ r: FitResult; jsMB: number; nodeMs: number }> {
  gc();
  const before = process.memoryUsage();
  const started = performance.now();
  const r = await fitImage(
    new Uint8Array(input),
    { embedTargetBytes: budget, maxLongEdge: MAX_EDGE, maxInputPixels: 16_777_216 },
    simd ? wasm : wasmWithoutSimd,
    settings,
  );
  const after = process.memoryUsage();
  // JS-side allocations still held at the end of the call (no GC in between), excluding WASM memories.
  const jsMB =
    (after.heapUsed - before.heapUsed + after.arrayBuffers - before.arrayBuffers - r.wasmPeakBytes) / 2 ** 20;
  return { r, jsMB, nodeMs: performance.now() - started };
}

/** The original agent's ladder: halve until it fits, trying 85/70/50 at each size (photon, naive). */
function halvingLadder(input: Buffer, budget: number) {
  const image = photon.PhotonImage.new_from_byteslice(new Uint8Array(input));
  let w = image.get_width(),
    h = image.get_height();
  let attempts = 0;
  if (Math.max(w, h) > MAX_EDGE) {
    const s = MAX_EDGE / Math.max(w, h);
    w = Math.round(w * s);
    h = Math.round(h * s);
  }
  for (;;) {
    const resized = photon.resize(image, w, h, photon.SamplingFilter.Lanczos3);
    for (const q of [85, 70, 50]) {
      const data = resized.get_bytes_jpeg(q);
      attempts++;
      if (dataUrlLength("image/jpeg", data.length) <= budget) {
        resized.free();
        image.free();
        return { data, width: w, height: h, attempts };
      }
    }
    resized.free();
    w = Math.max(1, Math.floor(w / 2));
    h = Math.max(1, Math.floor(h / 2));
  }
}

const rows: Row[] = [];
const uiRows: Array<{
  input: string;
  budget: string;
  ours: string;
  oursBytes: number;
  oursPsnr: number;
  ms: number;
  sharpJpeg: string;
  sharpJpegBytes: number;
  sharpJpegPsnr: number;
  sharpMs: number;
  sharpPngBytes: number;
  sharpPngFits: boolean;
}> = [];
const decodeRows: Array<{ input: string; stream: number; inflate: number; simd: number; js: number }> = [];
const inputs = PAIRS ? (await makeInputs()).filter((_, i) => !PICK || PICK.includes(i)) : [];
let screenshotRows: ScreenshotRow[] = [];
const worker = await startWorker();
try {
  // Warm-up: the first request compiles the WASM modules and JITs the JS.
  const uiInputs = UI ? await makeUiInputs() : [];
  const warm = inputs[0] ?? uiInputs[0];
  if (warm) await inWorkerd(worker.url, warm[1], 262144, "baseline", true);
  if (ALL) {
    await inWorkerd(worker.url, inputs[0]![1], 262144, "baseline", false);
    await inWorkerd(worker.url, inputs[0]![1], 262144, "mozjpeg", false);
  }
  for (const [name, input] of inputs) {
    for (const budget of BUDGETS) {
      const budgetLabel = `${budget / 1024} KiB`;
      const methods = [
        ["ours in workerd (SIMD kernels, baseline encoder)", "baseline", true],
        // The JS-kernel and MozJPEG columns (earlier comparisons) cost most of the run: --all adds them.
        ...(ALL
          ? ([
              ["ours in workerd (JS kernels, baseline encoder; before)", "baseline", false],
              ["ours in workerd (MozJPEG, JS resampler)", "mozjpeg", false],
            ] as const)
          : []),
      ] as const;
      /** Our production fit's chroma: sharp's side makes the 4:4:4 search where ours went out 4:4:4. */
      let chroma: WorkerFit["chroma"];
      for (const [label, encoder, simd] of methods) {
        const production = label.startsWith("ours in workerd (SIMD");
        const cpuAtStart = worker.cpuMs();
        const { fit, data, ms: firstMs } = await inWorkerd(worker.url, input, budget, encoder, simd);
        if (fit.simd !== simd) throw new Error(`${label}: the worker reported simd=${fit.simd}`);
        const settings = encoder === "mozjpeg" ? mozJpegFit(wasm.jpegEncoder) : {};
        const { jsMB, nodeMs: firstNodeMs } = await ours(input, budget, settings, simd);
        let ms = firstMs,
          nodeMs = firstNodeMs,
          netMs: number | undefined,
          cpuMs: number | undefined;
        if (production) {
          // Medians of REPEATS; workerd's own clock stands still while it computes, so its fit time is
          // the round trip less a header-only round trip of the same body (the upload through wrangler
          // dev's proxy: 7-38 ms for these inputs).
          const fits = [firstMs],
            headers: number[] = [],
            node = [firstNodeMs];
          for (let i = 1; i < REPEATS; i++) {
            fits.push((await inWorkerd(worker.url, input, budget, encoder, simd)).ms);
            node.push((await ours(input, budget, settings, simd)).nodeMs);
          }
          const cpuAfterFits = worker.cpuMs();
          for (let i = 0; i < REPEATS; i++) headers.push(await headerRoundTrip(worker.url, input));
          const cpuAfterHeaders = worker.cpuMs();
          // What Workers bill: CPU time, which the load of a shared box moves far less than wall time.
          if (cpuAtStart !== undefined && cpuAfterFits !== undefined && cpuAfterHeaders !== undefined)
            cpuMs = (cpuAfterFits - cpuAtStart - (cpuAfterHeaders - cpuAfterFits)) / REPEATS;
          ms = median(fits);
          nodeMs = median(node);
          netMs = ms - median(headers);
        }
        const own = await psnr(input, data);
        const psnrExact = production ? await psnrAtFullExact(input, data) : undefined;
        // Bytes-for-equal-PSNR against sharp, for the production column only (it costs ~16 sharp encodes).
        const sharpBytes = production
          ? await sharpBytesFor(input, fit.width, fit.height, { render: own, exact: psnrExact! }, fit.chroma)
          : undefined;
        if (production) chroma = fit.chroma;
        rows.push({
          input: name,
          budget: budgetLabel,
          method: label,
          ms,
          attempts: fit.attempts,
          bytes: fit.dataUrlBytes,
          dims: outputLabel(fit),
          psnr: own,
          psnrFull: await psnrAtFull(input, data),
          psnrExact,
          wasmMB: fit.wasmPeakBytes / 2 ** 20,
          jsMB,
          nodeMs,
          netMs,
          cpuMs,
          equalPsnrRatio: sharpBytes?.render === undefined ? undefined : data.length / sharpBytes.render,
          equalExactPsnrRatio: sharpBytes?.exact === undefined ? undefined : data.length / sharpBytes.exact,
          mediaType: fit.mediaType,
        });
      }
      const sharpTimes: number[] = [];
      let s: Awaited<ReturnType<typeof withSharp>> | undefined;
      const sharpCpu = process.cpuUsage();
      for (let i = 0; i < REPEATS; i++) {
        const t = performance.now();
        s = await withSharp(input, budget, { chroma });
        sharpTimes.push(performance.now() - t);
      }
      const sharpCpuMs = cpuMsSince(sharpCpu) / REPEATS;
      // Our fit also tries a PNG on a PNG source (fit.ts `withLossless`): the same step on sharp's side.
      let sharpCpuWithPngMs = sharpCpuMs;
      if (name.includes("PNG")) {
        const pngCpu = process.cpuUsage();
        for (let i = 0; i < REPEATS; i++) await withSharp(input, budget, { chroma, png: true });
        sharpCpuWithPngMs = cpuMsSince(pngCpu) / REPEATS;
      }
      rows.push({
        input: name,
        budget: budgetLabel,
        method: "sharp, same algorithm (Node)",
        ms: median(sharpTimes),
        cpuMs: sharpCpuMs,
        cpuWithPngMs: sharpCpuWithPngMs,
        attempts: s!.attempts,
        bytes: dataUrlLength("image/jpeg", s!.data.length),
        dims: `${s!.width}x${s!.height}`,
        psnr: await psnr(input, s!.data),
        psnrFull: await psnrAtFull(input, s!.data),
        psnrExact: await psnrAtFullExact(input, s!.data),
      });
      if (ALL) {
        // The original agent's ladder (1-4 s a row in photon): an earlier comparison, --all only.
        const t = performance.now();
        const l = halvingLadder(input, budget);
        rows.push({
          input: name,
          budget: budgetLabel,
          method: "old ladder (photon 85/70/50, halve; Node)",
          ms: performance.now() - t,
          attempts: l.attempts,
          bytes: dataUrlLength("image/jpeg", l.data.length),
          dims: `${l.width}x${l.height}`,
          psnr: await psnr(input, l.data),
          psnrFull: await psnrAtFull(input, l.data),
        });
      }
      console.error(`done ${name} ${budgetLabel}`);
    }
    if (name.includes("PNG") && !name.includes("P3")) {
      const time = async (query: string) => {
        const times: number[] = [];
        for (let i = 0; i < 5; i++) {
          let t0 = performance.now();
          let response = await fetch(`${worker.url}/?${query}`, { method: "POST", body: new Uint8Array(input) }).catch(
            (error: unknown) => new Response(String(error), { status: 599 }),
          );
          if (response.status === 599 || response.status === 503) {
            // wrangler dev restarts a workerd that dropped the request (a loaded box): once more, timed afresh.
            retries++;
            await new Promise((r) => setTimeout(r, 3000));
            t0 = performance.now();
            response = await fetch(`${worker.url}/?${query}`, { method: "POST", body: new Uint8Array(input) });
          }
          await response.arrayBuffer();
          if (!response.ok) throw new Error(`worker answered ${response.status} to ${query}`);
          times.push(performance.now() - t0);
        }
        return median(times);
      };
      decodeRows.push({
        input: name,
        stream: await time("mode=inflate-stream"),
        inflate: await time("mode=inflate"),
        simd: await time("mode=decode&simd=1"),
        js: await time("mode=decode&simd=0"),
      });
    }
  }
  // The UI-screenshot corpus: bytes and fidelity, ours against sharp's JPEG fit and sharp's PNG at the cap.
  for (const [name, input] of uiInputs) {
    for (const budget of BUDGETS) {
      const { fit, data, ms } = await inWorkerd(worker.url, input, budget, "baseline", true);
      const t = performance.now();
      const s = await withSharp(input, budget, { chroma: fit.chroma });
      const sharpMs = performance.now() - t;
      const meta = await sharp(input).metadata();
      const scale = Math.min(1, MAX_EDGE / Math.max(meta.width!, meta.height!));
      const w = Math.round(meta.width! * scale),
        h = Math.round(meta.height! * scale);
      const sharpPng = await sharp(input)
        .resize(w, h, { fit: "fill", kernel: "lanczos3" })
        .png({ compressionLevel: 9, adaptiveFiltering: true })
        .toBuffer();
      uiRows.push({
        input: name,
        budget: `${budget / 1024} KiB`,
        ours: outputLabel(fit) + (fit.passedThrough ? " (passed through)" : ""),
        oursBytes: fit.dataUrlBytes,
        oursPsnr: await psnrAtFull(input, data),
        ms,
        sharpJpeg: `${s.width}x${s.height}`,
        sharpJpegBytes: dataUrlLength("image/jpeg", s.data.length),
        sharpJpegPsnr: await psnrAtFull(input, s.data),
        sharpMs,
        sharpPngBytes: dataUrlLength("image/png", sharpPng.length),
        sharpPngFits: dataUrlLength("image/png", sharpPng.length) <= budget,
      });
      console.error(`done ${name} ${budget / 1024} KiB`);
    }
  }
  if (SHOTS)
    screenshotRows = await measureScreenshots(
      wasm,
      (input, budget) => inWorkerd(worker.url, input, budget, "baseline", true),
      (input) => headerRoundTrip(worker.url, input),
      worker.cpuMs,
    );
} finally {
  worker.stop();
}

console.log(
  `load average at the end of the run: ${loadavg()
    .map((v) => v.toFixed(1))
    .join(" ")} (${cpus().length} cores)\n`,
);
if (!rows.length && screenshotRows.length) {
  printScreenshots(screenshotRows);
  process.exit(0);
}
console.log(
  "| input | budget | method | time ms | encodes | data: URL bytes | output | PSNR dB | WASM peak MB | JS held MB |",
);
console.log("|---|---|---|---:|---:|---:|---|---:|---:|---:|");
for (const r of rows) {
  console.log(
    `| ${r.input} | ${r.budget} | ${r.method} | ${r.ms.toFixed(0)} | ${r.attempts} | ${r.bytes} | ${r.dims} | ${r.psnr.toFixed(2)} | ${r.wasmMB?.toFixed(1) ?? "-"} | ${r.jsMB?.toFixed(1) ?? "-"} |`,
  );
}
console.log(
  "\n| PNG input | inflate only, DecompressionStream (before) ms | inflate only, zlib-ng WASM ms | decode, SIMD unfilter/flatten ms | decode, JS unfilter/flatten ms |",
);
console.log("|---|---:|---:|---:|---:|");
for (const d of decodeRows)
  console.log(
    `| ${d.input} | ${d.stream.toFixed(0)} | ${d.inflate.toFixed(0)} | ${d.simd.toFixed(0)} | ${d.js.toFixed(0)} |`,
  );
const byMethod = new Map<string, Row[]>();
for (const r of rows) byMethod.set(r.method, [...(byMethod.get(r.method) ?? []), r]);
const sharpRows = byMethod.get("sharp, same algorithm (Node)") ?? [];
console.log("\n| method | median encodes | max encodes | time / sharp (median) | PSNR − sharp (median dB) |");
console.log("|---|---:|---:|---:|---:|");
for (const [method, list] of byMethod) {
  const ratios = list.map((r, i) => r.ms / sharpRows[i]!.ms);
  const gains = list.map((r, i) => r.psnr - sharpRows[i]!.psnr);
  console.log(
    `| ${method} | ${median(list.map((r) => r.attempts))} | ${Math.max(...list.map((r) => r.attempts))} | ${median(ratios).toFixed(2)}x | ${median(gains) >= 0 ? "+" : ""}${median(gains).toFixed(2)} |`,
  );
}

const oursRows = byMethod.get("ours in workerd (SIMD kernels, baseline encoder)") ?? [];
// The same fit in Node runs next to sharp's (same process, same moment): a ratio that the load of
// a shared box distorts less than the workerd round trip.
const nodeRatios = oursRows.map((r, i) => r.nodeMs! / sharpRows[i]!.ms);
if (retries > 0) console.log(`\n(${retries} request(s) retried after workerd dropped the connection)`);
const workerdRatios = oursRows.map((r, i) => r.ms / sharpRows[i]!.ms);
const netRatios = oursRows.map((r, i) => r.netMs! / sharpRows[i]!.ms);
const cpuRatios = oursRows.flatMap((r, i) => (r.cpuMs === undefined ? [] : [r.cpuMs / sharpRows[i]!.cpuMs!]));
const cpuPngRatios = oursRows.flatMap((r, i) => (r.cpuMs === undefined ? [] : [r.cpuMs / sharpRows[i]!.cpuWithPngMs!]));
/** A ratio for the tables, "-" where it could not be measured (the CPU column off Linux). */
const ratio = (value: number | undefined) => (value === undefined ? "-" : `${value.toFixed(2)}x`);
console.log(
  `\nours in Node / sharp, median over all rows: ${median(nodeRatios).toFixed(2)}x, worst ${Math.max(...nodeRatios).toFixed(2)}x (workerd round trip / sharp: median ${median(workerdRatios).toFixed(2)}x, worst ${Math.max(...workerdRatios).toFixed(2)}x; workerd fit, the round trip less the body's upload / sharp: median ${median(netRatios).toFixed(2)}x, worst ${Math.max(...netRatios).toFixed(2)}x; medians of ${REPEATS} runs)`,
);
if (cpuRatios.length)
  console.log(
    `CPU time of the fit in workerd (less the upload's) / sharp's: median ${median(cpuRatios).toFixed(2)}x, worst ${Math.max(...cpuRatios).toFixed(2)}x; / sharp's with our PNG step on PNG sources: median ${median(cpuPngRatios).toFixed(2)}x, worst ${Math.max(...cpuPngRatios).toFixed(2)}x (means of ${REPEATS} runs)`,
  );
const fullGains = oursRows.map((r, i) => r.psnrFull - sharpRows[i]!.psnrFull);
const equal = oursRows.map((r) => r.equalPsnrRatio).filter((v): v is number => v !== undefined);
console.log(
  `PSNR at the full target size, ours − sharp: median ${median(fullGains).toFixed(2)} dB, worst ${Math.min(...fullGains).toFixed(2)} dB; bytes for equal PSNR, ours / sharp: median ${median(equal).toFixed(2)}, worst ${Math.max(...equal).toFixed(2)}`,
);
const exactGains = oursRows.map((r, i) => r.psnrExact! - sharpRows[i]!.psnrExact!);
const equalExact = oursRows.map((r) => r.equalExactPsnrRatio).filter((v): v is number => v !== undefined);
console.log(
  `PSNR at the full target size against an exact Lanczos-3 of the original, ours − sharp: median ${median(exactGains).toFixed(2)} dB, worst ${Math.min(...exactGains).toFixed(2)} dB; bytes for equal PSNR there, ours / sharp: median ${median(equalExact).toFixed(2)}, worst ${Math.max(...equalExact).toFixed(2)}`,
);
console.log(
  "\n| input | budget | ours output | sharp output | PSNR ours − sharp dB (own size) | PSNR at full size, ours / sharp dB | PSNR at full size against an exact Lanczos-3, ours / sharp dB | bytes for equal PSNR, ours / sharp | bytes for equal PSNR against the exact Lanczos-3, ours / sharp | time ours / sharp (workerd round trip) | time ours / sharp (workerd, less the upload) | time ours / sharp (Node) | CPU ours / sharp (workerd, less the upload) | CPU ours / sharp with the PNG step |",
);
console.log("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
oursRows.forEach((r, i) => {
  const s = sharpRows[i]!;
  const gain = r.psnr - s.psnr;
  const equalBytes = (v: number | undefined) => (v === undefined ? "sharp never reaches it" : `${v.toFixed(2)}`);
  console.log(
    `| ${r.input} | ${r.budget} | ${r.dims} | ${s.dims} | ${gain >= 0 ? "+" : ""}${gain.toFixed(2)} | ${r.psnrFull.toFixed(2)} / ${s.psnrFull.toFixed(2)} | ${r.psnrExact!.toFixed(2)} / ${s.psnrExact!.toFixed(2)} | ${equalBytes(r.equalPsnrRatio)} | ${equalBytes(r.equalExactPsnrRatio)} | ${(r.ms / s.ms).toFixed(2)}x | ${(r.netMs! / s.ms).toFixed(2)}x | ${(r.nodeMs! / s.ms).toFixed(2)}x | ${ratio(r.cpuMs === undefined ? undefined : r.cpuMs / s.cpuMs!)} | ${ratio(r.cpuMs === undefined ? undefined : r.cpuMs / s.cpuWithPngMs!)} |`,
  );
});

console.log(
  "\nUI-screenshot corpus (PNG inputs; PSNR at the full target size against sharp's Lanczos3 of the original there):\n",
);
console.log(
  "| input | budget | ours output | ours data: URL bytes | ours PSNR dB | sharp JPEG fit | sharp JPEG bytes | sharp JPEG PSNR dB | sharp PNG at the cap, bytes | fits | time ours / sharp JPEG (workerd) |",
);
console.log("|---|---|---|---:|---:|---|---:|---:|---:|---|---:|");
for (const u of uiRows) {
  console.log(
    `| ${u.input} | ${u.budget} | ${u.ours} | ${u.oursBytes} | ${u.oursPsnr.toFixed(2)} | ${u.sharpJpeg} | ${u.sharpJpegBytes} | ${u.sharpJpegPsnr.toFixed(2)} | ${u.sharpPngBytes} | ${u.sharpPngFits ? "yes" : "no"} | ${(u.ms / u.sharpMs).toFixed(2)}x |`,
  );
}
if (screenshotRows.length) printScreenshots(screenshotRows);
