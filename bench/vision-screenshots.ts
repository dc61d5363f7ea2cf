/**
 * The typical screenshots (bench/vision-inputs.ts makeScreenshotInputs: 1280x800 to 2560x1440, light
 * and dark, RGB PNG) fitted at the default budget (256 KiB), ours against sharp side by side: per
 * round, ours in Node, sharp (libvips on one thread, `sharp.concurrency(1)`) with our algorithm
 * (bench/vision-sharp.ts), sharp with our PNG step as well, then ours in workerd; medians of
 * SCREENSHOT_REPEATS rounds (default 5). Part of bench/vision.bench.ts (`--screenshots-only` runs
 * this part alone).
 */
import sharp from "sharp";
import { fitImage } from "../shared/imaging/fit";
import type { FitResult } from "../shared/ports";
import { psnrAtFull, psnrAtFullExact } from "./vision-psnr";
import { cpuMsSince, median } from "./stats";
import { makeScreenshotInputs } from "./vision-inputs";
import { withSharp } from "./vision-sharp";
import type { loadVisionWasmNode } from "./vision-wasm-node";

export const SCREENSHOT_BUDGET = 256 * 1024;
const REPEATS = Number(process.env.SCREENSHOT_REPEATS ?? 5);

/** One fit in workerd as vision.bench.ts times it: the output, its numbers and the round trip. */
export type WorkerdFit = (
  input: Buffer,
  budget: number,
) => Promise<{
  fit: { width: number; height: number; mediaType: string; quality?: number };
  data: Uint8Array;
  ms: number;
}>;

export interface ScreenshotRow {
  input: string;
  ours: string;
  sharp: string;
  nodeMs: number;
  nodeCpuMs: number;
  sharpMs: number;
  sharpCpuMs: number;
  sharpPngMs: number;
  /** The workerd round trip less a header-only round trip of the same body (the upload). */
  workerdMs: number;
  /** workerd's CPU per fit request less its CPU per header-only request (undefined off Linux). */
  workerdCpuMs?: number;
  psnr: number;
  sharpPsnr: number;
  psnrExact: number;
  sharpPsnrExact: number;
  bytes: number;
  sharpBytes: number;
}

const label = (r: { width: number; height: number; mediaType: string; quality?: number }) =>
  `${r.width}x${r.height} ${r.mediaType === "image/png" ? "PNG" : `q${r.quality}`}`;

/** Runs the side-by-side rounds; `header` is a header-only round trip of the body, `workerdCpu` the workerd CPU so far. */
export async function measureScreenshots(
  wasm: ReturnType<typeof loadVisionWasmNode>,
  inWorkerd: WorkerdFit,
  header: (input: Buffer) => Promise<number>,
  workerdCpu: () => number | undefined,
): Promise<ScreenshotRow[]> {
  const threads = sharp.concurrency();
  sharp.concurrency(1);
  const rows: ScreenshotRow[] = [];
  try {
    for (const [name, input] of await makeScreenshotInputs()) {
      const opts = { embedTargetBytes: SCREENSHOT_BUDGET, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
      const ours = () => fitImage(new Uint8Array(input), opts, wasm);
      // Warm-up of each side on this input.
      const first = await ours();
      await withSharp(input, SCREENSHOT_BUDGET, { chroma: first.chroma });
      await inWorkerd(input, SCREENSHOT_BUDGET);
      const node: number[] = [],
        nodeCpu: number[] = [],
        sharpMs: number[] = [],
        sharpCpu: number[] = [],
        sharpPng: number[] = [],
        workerd: number[] = [],
        headers: number[] = [],
        workerdCpu_: number[] = [];
      let r: FitResult = first;
      let s: Awaited<ReturnType<typeof withSharp>> | undefined;
      let w: Awaited<ReturnType<WorkerdFit>> | undefined;
      for (let i = 0; i < REPEATS; i++) {
        let cpu = process.cpuUsage();
        let t = performance.now();
        r = await ours();
        node.push(performance.now() - t);
        nodeCpu.push(cpuMsSince(cpu));
        cpu = process.cpuUsage();
        t = performance.now();
        s = await withSharp(input, SCREENSHOT_BUDGET, { chroma: r.chroma });
        sharpMs.push(performance.now() - t);
        sharpCpu.push(cpuMsSince(cpu));
        t = performance.now();
        await withSharp(input, SCREENSHOT_BUDGET, { chroma: r.chroma, png: true });
        sharpPng.push(performance.now() - t);
        const c0 = workerdCpu();
        w = await inWorkerd(input, SCREENSHOT_BUDGET);
        const c1 = workerdCpu();
        const h = await header(input);
        const c2 = workerdCpu();
        workerd.push(w.ms);
        headers.push(h);
        if (c0 !== undefined && c1 !== undefined && c2 !== undefined) workerdCpu_.push(c1 - c0 - (c2 - c1));
      }
      rows.push({
        input: name,
        ours: `${label(r)}, ${r.encodeAttempts} encodes`,
        sharp: `${s!.width}x${s!.height}, ${s!.attempts} encodes`,
        nodeMs: median(node),
        nodeCpuMs: median(nodeCpu),
        sharpMs: median(sharpMs),
        sharpCpuMs: median(sharpCpu),
        sharpPngMs: median(sharpPng),
        workerdMs: median(workerd) - median(headers),
        workerdCpuMs: workerdCpu_.length ? median(workerdCpu_) : undefined,
        psnr: await psnrAtFull(input, w!.data),
        sharpPsnr: await psnrAtFull(input, s!.data),
        psnrExact: await psnrAtFullExact(input, w!.data),
        sharpPsnrExact: await psnrAtFullExact(input, s!.data),
        bytes: w!.data.length,
        sharpBytes: s!.data.length,
      });
      console.error(`done ${name}`);
    }
  } finally {
    sharp.concurrency(threads);
  }
  return rows;
}

/** The per-input table and the per-size ratios (the worse of light and dark). */
export function printScreenshots(rows: ScreenshotRow[]): void {
  const x = (a: number, b: number | undefined) =>
    b === undefined || !Number.isFinite(a) ? "-" : `${(a / b).toFixed(2)}x`;
  console.log(
    `\nTypical screenshots at ${SCREENSHOT_BUDGET / 1024} KiB (RGB PNG; sharp on one thread, our algorithm; medians of ${REPEATS} interleaved rounds; PSNR at the full target size against sharp's Lanczos3 of the original / against an exact Lanczos-3):\n`,
  );
  console.log(
    "| input | ours output | sharp output | ours Node ms | sharp ms | ours / sharp (Node) | ours workerd ms (less the upload) | ours / sharp (workerd) | CPU ours Node / sharp | CPU ours workerd / sharp | sharp with our PNG step ms | PSNR ours / sharp dB | PSNR exact ours / sharp dB | bytes ours / sharp |",
  );
  console.log("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.input} | ${r.ours} | ${r.sharp} | ${r.nodeMs.toFixed(1)} | ${r.sharpMs.toFixed(1)} | ${x(r.nodeMs, r.sharpMs)} | ${r.workerdMs.toFixed(1)} | ${x(r.workerdMs, r.sharpMs)} | ${x(r.nodeCpuMs, r.sharpCpuMs)} | ${r.workerdCpuMs === undefined ? "-" : x(r.workerdCpuMs, r.sharpCpuMs)} | ${r.sharpPngMs.toFixed(1)} | ${r.psnr.toFixed(2)} / ${r.sharpPsnr.toFixed(2)} | ${r.psnrExact.toFixed(2)} / ${r.sharpPsnrExact.toFixed(2)} | ${r.bytes} / ${r.sharpBytes} |`,
    );
  console.log(
    "\n| size | ours / sharp, Node (worse of light, dark) | ours / sharp, workerd less the upload | CPU ours Node / sharp | CPU ours workerd / sharp |",
  );
  console.log("|---|---:|---:|---:|---:|");
  const sizes = [...new Set(rows.map((r) => r.input.split(" ")[1]!))];
  for (const size of sizes) {
    const of = rows.filter((r) => r.input.split(" ")[1] === size);
    const worst = (f: (r: ScreenshotRow) => number | undefined) => {
      const v = of.map(f).filter((n): n is number => n !== undefined);
      return v.length ? `${Math.max(...v).toFixed(2)}x` : "-";
    };
    console.log(
      `| ${size} | ${worst((r) => r.nodeMs / r.sharpMs)} | ${worst((r) => r.workerdMs / r.sharpMs)} | ${worst((r) => r.nodeCpuMs / r.sharpCpuMs)} | ${worst((r) => (r.workerdCpuMs === undefined ? undefined : r.workerdCpuMs / r.sharpCpuMs))} |`,
    );
  }
}
