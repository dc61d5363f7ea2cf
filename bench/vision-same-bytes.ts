/**
 * Every corpus fit by this checkout beside another (`BEFORE`, e.g. /work/main): the 33 pairs'
 * inputs (bench/vision-inputs.ts makeInputs), the UI corpus and the typical screenshots, each at
 * 64 KiB, 256 KiB and 1 MiB, and the computer-use session's screenshot (bench/computer-use-session.ts).
 * Prints the fits whose bytes differ, with both sides' size, quality and PSNR (bench/vision-psnr.ts,
 * against sharp's render at the output's size), and fails (exit 1) where an output is over its
 * budget or loses more than 0.05 dB.
 * Run: BEFORE=/work/main npx tsx bench/vision-same-bytes.ts
 */
import { resolve } from "node:path";
import type { FitResult } from "../shared/ports";
import { screenshot } from "./computer-use-session";
import { BUDGETS, makeInputs, makeScreenshotInputs, makeUiInputs } from "./vision-inputs";
import { psnr } from "./vision-psnr";

const before = process.env.BEFORE;
if (!before) throw new Error("BEFORE=<the other checkout> (e.g. /work/main)");
type Fit = (bytes: Uint8Array, o: object, wasm: unknown) => Promise<FitResult>;
const sides = await Promise.all(
  [resolve(before), resolve(".")].map(async (root) => {
    const { fitImage } = (await import(`${root}/shared/imaging/fit.ts`)) as { fitImage: Fit };
    const { loadVisionWasmNode } = await import(`${root}/bench/vision-wasm-node.ts`);
    return { fitImage, wasm: loadVisionWasmNode() };
  }),
);
const inputs = [
  ...(await makeInputs()),
  ...(await makeUiInputs()),
  ...(await makeScreenshotInputs()),
  ["session 1920x1080 light PNG", Buffer.from(await screenshot(1, false), "base64")] as [string, Buffer],
];
let fits = 0,
  same = 0,
  bad = 0;
for (const [name, input] of inputs) {
  for (const budget of BUDGETS) {
    const opts = { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
    const out: FitResult[] = [];
    for (const side of sides) out.push(await side.fitImage(new Uint8Array(input), opts, side.wasm));
    const [old, now] = out as [FitResult, FitResult];
    fits++;
    if (old.data.length === now.data.length && old.data.every((v, i) => v === now.data[i])) {
      same++;
      continue;
    }
    const [pOld, pNew] = [await psnr(input, old.data), await psnr(input, now.data)];
    const over = now.dataUrlBytes > budget;
    const lost = pNew < pOld - 0.05;
    if (over || lost) bad++;
    console.log(
      `${over || lost ? "FAIL" : "differs"} ${name} at ${budget / 1024} KiB: ${old.mediaType} ${old.width}x${old.height} q${old.quality} ${old.data.length} B ${pOld.toFixed(3)} dB -> ${now.mediaType} ${now.width}x${now.height} q${now.quality} ${now.data.length} B ${pNew.toFixed(3)} dB (data URL ${now.dataUrlBytes} of ${budget})`,
    );
  }
}
console.log(
  `${fits} fits, ${same} byte-identical, ${fits - same} differ, ${bad} over budget or more than 0.05 dB worse`,
);
if (bad) process.exitCode = 1;
