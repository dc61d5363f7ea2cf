/**
 * Where a PNG fit's decode + resample half goes, stage by stage (Node, our SIMD kernels): the chunk
 * walk (CRCs), the inflate alone, inflate + unfilter (+ RGBA flatten), the same into the resampler
 * the fit builds (Lanczos-3 to the 1568 px cap, a fit's SimdPool), and the whole fit at 256 KiB.
 * Each stage includes the ones before it, so the differences are the stages' costs. CPU time
 * (process.cpuUsage: steadier than wall time on a shared box), least of RUNS (default 9) runs per
 * stage, stages interleaved per round. With DECODE_STAGES_BEFORE=<checkout>
 * (e.g. /work/main) the same stages run from that checkout's code in the same rounds, side by side.
 * Also prints each input's row filter mix (what the unfilter runs on), and first the unfilter
 * kernel alone per filter type on a 1920-pixel RGB and RGBA line, in ns a pixel (least of 7 rounds),
 * and the resampler alone at the fits' two shrinks.
 * Run: npx tsx bench/vision-decode-stages.ts [name-substring...]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { SimdExports } from "../shared/imaging/wasm/simd.instances";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { makeScreenshotInputs } from "./vision-inputs";
import { screenshot } from "./computer-use-session";
import { cpuMsSince } from "./stats";

type PngDecode = typeof import("../shared/imaging/codecs/png/png.decode");
type PngInflate = typeof import("../shared/imaging/codecs/png/png.inflate");
type Resample = typeof import("../shared/imaging/resample");
type Instances = typeof import("../shared/imaging/wasm/simd.instances");
type Fit = typeof import("../shared/imaging/fit");

interface Tree {
  label: string;
  root: string;
  /** The VisionWasm port with this tree's own .wasm files (the kernels are part of what is compared). */
  wasm: ReturnType<typeof loadVisionWasmNode>;
  decode: PngDecode;
  inflate: PngInflate;
  resample: Resample;
  instances: Instances;
  fit: Fit;
}

async function load(label: string, root: string): Promise<Tree> {
  const at = (p: string) => join(root, p);
  return {
    label,
    root,
    wasm: {
      ...loadVisionWasmNode(),
      zlib: new WebAssembly.Module(readFileSync(at("shared/imaging/wasm/zlib.wasm"))),
      simd: new WebAssembly.Module(readFileSync(at("shared/imaging/wasm/vision.simd.wasm"))),
    },
    decode: await import(at("shared/imaging/codecs/png/png.decode.ts")),
    inflate: await import(at("shared/imaging/codecs/png/png.inflate.ts")),
    resample: await import(at("shared/imaging/resample.ts")),
    instances: await import(at("shared/imaging/wasm/simd.instances.ts")),
    fit: await import(at("shared/imaging/fit.ts")),
  };
}

const runs = Number(process.env.RUNS ?? 9);
const only = process.argv.slice(2);
const here = new URL("..", import.meta.url).pathname;
const trees = [await load("this tree", here)];
if (process.env.DECODE_STAGES_BEFORE) trees.unshift(await load("before", process.env.DECODE_STAGES_BEFORE));

/** The `unfilter` export of each tree's vision.simd.wasm, per filter and bytes per pixel, in ns a pixel. */
function unfilterKernel(roots: Array<[string, string]>): void {
  const kernels = roots.map(([label, root]) => {
    const bytes = readFileSync(join(root, "shared/imaging/wasm/vision.simd.wasm"));
    const k = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as SimdExports;
    k.memory.grow(1);
    return [label, k] as const;
  });
  const cur = 1024,
    prev = 8192;
  const best = new Map<string, number>();
  for (let round = 0; round < 7; round++)
    for (const bpp of [3, 4])
      for (const filter of [1, 3, 4])
        for (const [label, k] of kernels) {
          const n = 1920 * bpp;
          const mem = new Uint8Array(k.memory.buffer);
          for (let i = 0; i < n + 16; i++) {
            mem[cur + i] = (i * 37) & 255;
            mem[prev + i] = (i * 91) & 255;
          }
          const calls = 300;
          const start = performance.now();
          for (let i = 0; i < calls; i++) k.unfilter(filter, cur, prev, n, bpp);
          const ns = ((performance.now() - start) * 1e6) / calls / 1920;
          const key = `${bpp} ${filter} ${label}`;
          best.set(key, Math.min(best.get(key) ?? Infinity, ns));
        }
  console.log(`| unfilter kernel, ns a pixel | ${kernels.map(([label]) => label).join(" | ")} |`);
  console.log(`|---|${kernels.map(() => "---:").join("|")}|`);
  for (const bpp of [3, 4])
    for (const filter of [1, 3, 4])
      console.log(
        `| ${["", "Sub", "", "Average", "Paeth"][filter]}, ${bpp} bytes a pixel | ${kernels.map(([label]) => best.get(`${bpp} ${filter} ${label}`)!.toFixed(2)).join(" | ")} |`,
      );
}
unfilterKernel(trees.map((t) => [t.label, t.root]));

/** The resampler alone (resizeRgb of noise, the fit's sizes), each tree's code and kernels: CPU ms, least of 9 rounds. */
function resamplerAlone(): void {
  console.log(`\n| resampler alone (resizeRgb), CPU ms | ${trees.map((t) => t.label).join(" | ")} |`);
  console.log(`|---|${trees.map(() => "---:").join("|")}|`);
  for (const [w, h, dw, dh] of [
    [1920, 1080, 1568, 882],
    [2560, 1440, 1568, 882],
  ] as const) {
    const src = new Uint8Array(w * h * 3);
    for (let i = 0; i < src.length; i++) src[i] = (i * 2654435761) >>> 24;
    const best = trees.map(() => Infinity);
    for (let round = 0; round < 9; round++)
      trees.forEach((t, i) => {
        const start = process.cpuUsage();
        t.resample.resizeRgb(src, w, h, dw, dh, t.wasm.simd);
        best[i] = Math.min(best[i]!, cpuMsSince(start));
      });
    console.log(`| ${w}x${h} to ${dw}x${dh} | ${best.map((ms) => ms.toFixed(1)).join(" | ")} |`);
  }
}
resamplerAlone();

const inputs: Array<[string, Uint8Array]> = [
  ...(await makeScreenshotInputs()).map(([n, b]) => [n, new Uint8Array(b)] as [string, Uint8Array]),
  ["computer-use session 1920x1080 PNG", new Uint8Array(Buffer.from(await screenshot(16, false), "base64"))],
];
const opts = { embedTargetBytes: 256 * 1024, maxLongEdge: 1568, maxInputPixels: 16_777_216 };

function filterMix(t: Tree, bytes: Uint8Array): string {
  const info = t.decode.parseChunks(bytes);
  const stride = Math.ceil((info.width * t.decode.CHANNELS[info.colorType]! * info.bitDepth) / 8) + 1;
  const counts = [0, 0, 0, 0, 0];
  const inflater = new t.inflate.ZlibInflater(t.wasm.zlib, info.idat);
  let pos = 0;
  for (let d = inflater.next(); d; d = inflater.next()) {
    for (let i = (stride - (pos % stride)) % stride; i < d.length; i += stride) counts[d[i]!]!++;
    pos += d.length;
  }
  return `filters none/sub/up/avg/paeth ${counts.join("/")}`;
}

const sink = { wantsRow: () => true, pushRow: () => undefined };

function stages(t: Tree, bytes: Uint8Array): Record<string, () => unknown> {
  const { wasm } = t;
  const fitSize = (w: number, h: number) => {
    const s = Math.min(1, 1568 / Math.max(w, h));
    return [Math.round(w * s), Math.round(h * s)] as const;
  };
  return {
    "chunk walk": () => t.decode.parseChunks(bytes),
    "+ inflate": () => {
      const inflater = new t.inflate.ZlibInflater(wasm.zlib, t.decode.parseChunks(bytes).idat);
      while (inflater.next());
    },
    "+ unfilter": () =>
      t.decode.decodePngRows(t.decode.parseChunks(bytes), () => sink as never, { zlib: wasm.zlib, simd: wasm.simd }),
    "+ resample": () => {
      const pool = new t.instances.SimdPool(wasm.simd!);
      const { resampler } = t.decode.decodePngRows(
        t.decode.parseChunks(bytes),
        (w, h) => {
          const [dw, dh] = fitSize(w, h);
          return new t.resample.StreamingResampler(w, h, { x: 0, y: 0, width: w, height: h }, dw, dh, pool);
        },
        { zlib: wasm.zlib, simd: wasm.simd },
      );
      return resampler.finish();
    },
    "whole fit": () => t.fit.fitImage(bytes, opts, wasm),
  };
}

for (const [name, bytes] of inputs) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  console.log(`\n${name}, ${(bytes.length / 1024).toFixed(0)} KB, ${filterMix(trees[0]!, bytes)}`);
  const best = new Map<string, number>();
  const all = trees.map((t) => [t, stages(t, bytes)] as const);
  for (const [, s] of all) for (const run of Object.values(s)) await run(); // warm-up
  for (let r = 0; r < runs; r++)
    for (const [t, s] of all)
      for (const [stage, run] of Object.entries(s)) {
        const start = process.cpuUsage();
        await run();
        const ms = cpuMsSince(start);
        const key = `${t.label}\t${stage}`;
        best.set(key, Math.min(best.get(key) ?? Infinity, ms));
      }
  if (trees.length > 1) {
    const [a, b] = all.map(([, s]) => s["+ resample"]!() as Uint8Array);
    console.log(
      `decoded and resampled pixels: ${Buffer.compare(a!, b!) === 0 ? "the same bytes" : "DIFFERENT"} in both trees`,
    );
  }
  console.log(`| stage (cumulative) | ${trees.map((t) => `${t.label} CPU ms`).join(" | ")} |`);
  console.log(`|---|${trees.map(() => "---:").join("|")}|`);
  for (const stage of Object.keys(all[0]![1]))
    console.log(`| ${stage} | ${trees.map((t) => best.get(`${t.label}\t${stage}`)!.toFixed(1)).join(" | ")} |`);
}
