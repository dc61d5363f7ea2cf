/**
 * The encode half of a fit, stage by stage (Node, our SIMD kernels, CPU ms, least of RUNS): on the
 * typical screenshots' and the computer-use session's cap-size render (decoded by sharp, resampled
 * by ours) at 256 KiB, the colour conversion + DCT, the table choice, one sampled size estimate,
 * one full counting pass, the write after it, and the PNG prediction (fit.ts PNG_SLACK) at the
 * JPEG's size.
 * Run: npx tsx bench/vision-encode-stages.ts [name-substring...]   (RUNS=n, default 8)
 */
import { loadavg } from "node:os";
import sharp from "sharp";
import { maxPayloadBytes } from "../shared/media/data-url";
import { PNG_SLACK } from "../shared/imaging/fit";
import { prepareJpeg } from "../shared/imaging/jpeg.baseline";
import { pngPredictedOver } from "../shared/imaging/codecs/png/png.encode";
import { resizeRgb } from "../shared/imaging/resample";
import { SimdPool } from "../shared/imaging/wasm/simd.instances";
import { screenshot } from "./computer-use-session";
import { makeScreenshotInputs } from "./vision-inputs";
import { loadVisionWasmNode } from "./vision-wasm-node";

const wasm = loadVisionWasmNode();
const runs = Number(process.env.RUNS ?? 8);
const only = process.argv.slice(2);
const maxBytes = maxPayloadBytes("image/jpeg", 256 * 1024);

const cpu = <T>(f: () => T): [T, number] => {
  const start = process.cpuUsage();
  const out = f();
  const used = process.cpuUsage(start);
  return [out, (used.user + used.system) / 1000];
};

const inputs = await makeScreenshotInputs();
inputs.push(["session 1920x1080 light PNG", Buffer.from(await screenshot(1, false), "base64")]);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}; least of ${runs}; CPU ms\n`,
);
console.log("| input | colour + DCT | table choice | one estimate | one count | write | PNG prediction |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const [name, input] of inputs) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  const { data, info } = await sharp(input).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const scale = Math.min(1, 1568 / Math.max(info.width, info.height));
  const w = Math.round(info.width * scale),
    h = Math.round(info.height * scale);
  const rgb = resizeRgb(new Uint8Array(data), info.width, info.height, w, h, wasm.simd);
  const least = [Infinity, Infinity, Infinity, Infinity, Infinity, Infinity];
  for (let run = 0; run < runs; run++) {
    const pool = new SimdPool(wasm.simd!);
    const [prepared, dct] = cpu(() => prepareJpeg(rgb, w, h, pool));
    const [, choose] = cpu(() => prepared.chooseTables(maxBytes, 30, 100));
    const [, estimates] = cpu(() => {
      for (let q = 60; q < 70; q++) prepared.estimateAt(q);
    });
    const q = 70 + (run % 5);
    const [size, count] = cpu(() => prepared.sizeAt(q));
    const [jpeg, write] = cpu(() => prepared.encode(q));
    const [, png] = cpu(() => pngPredictedOver(rgb, w, h, jpeg.length, PNG_SLACK, wasm.zlib));
    pool.release();
    void size;
    [dct, choose, estimates / 10, count, write, png].forEach((v, i) => {
      least[i] = Math.min(least[i]!, v);
    });
  }
  console.log(`| ${name} | ${least.map((v) => v.toFixed(2)).join(" | ")} |`);
}
