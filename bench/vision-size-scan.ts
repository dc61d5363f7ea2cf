/**
 * Whether another output size would have been more faithful: our fit of each chosen input at one
 * budget, as it ships and with the long edge capped at each of EDGES (the source decoded straight to
 * that size, then the usual search), beside sharp's run of the same algorithm; every output is
 * measured at the full target size against the exact Lanczos-3 (vision-psnr.ts `psnrAtFullExact`).
 * Run: INPUTS="5K screenshot" BUDGET=65536 EDGES=1400,1140,1062,950 npx tsx bench/vision-size-scan.ts
 * (docs/vision-decisions.md, "The two 5K screenshots at 64 KiB").
 */
import type { FitResult } from "../shared/ports";
import { fitImage } from "../shared/imaging/fit";
import { makeInputs } from "./vision-inputs";
import { psnrAtFullExact } from "./vision-psnr";
import { withSharp } from "./vision-sharp";
import { loadVisionWasmNode } from "./vision-wasm-node";

const MAX_EDGE = 1568;
const wasm = loadVisionWasmNode();
const wanted = (process.env.INPUTS ?? "5K screenshot").split(",");
const budget = Number(process.env.BUDGET ?? 64 * 1024);
const edges = (process.env.EDGES ?? "1400,1300,1200,1140,1100,1062,1000,950,900,850,800").split(",").map(Number);

const row = async (label: string, original: Buffer, fit: FitResult) =>
  console.log(
    `  ${label}: ${fit.width}x${fit.height} q${fit.quality} ${fit.jpegTables ?? ""} ${fit.data.length} B, ${(await psnrAtFullExact(original, fit.data)).toFixed(3)} dB`,
  );

for (const [name, bytes] of await makeInputs()) {
  if (!wanted.some((w) => name.includes(w))) continue;
  const fitAt = (maxLongEdge: number) =>
    fitImage(new Uint8Array(bytes), { embedTargetBytes: budget, maxLongEdge, maxInputPixels: 16_777_216 }, wasm);
  console.log(`${name} at ${budget} bytes`);
  await row("ours", bytes, await fitAt(MAX_EDGE));
  const sharp = await withSharp(bytes, budget);
  console.log(
    `  sharp: ${sharp.width}x${sharp.height} ${sharp.data.length} B, ${(await psnrAtFullExact(bytes, sharp.data)).toFixed(3)} dB`,
  );
  for (const edge of edges) await row(`edge ${edge}`, bytes, await fitAt(edge));
}
