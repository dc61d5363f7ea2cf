/**
 * Where a vision fit's time goes (Node, our SIMD kernels): runs fitImage on the bench's 33
 * input/budget pairs (bench/vision-inputs.ts) under the V8 CPU profiler (node:inspector) and
 * charges every sample to a stage by the innermost function of ours on its stack: decode
 * (TurboJPEG, inflate, unfilter), resample (Lanczos/box), encode (colour conversion + DCT, the
 * final scan write), search (quality measures: quantise and count, Huffman sizes), compare (the
 * full-size vs smaller comparison) and other (structure walk, ICC, glue). Not a benchmark: time in
 * Node is not time in workerd, but the shares show which kernels matter.
 * Run: npx tsx bench/vision-profile.ts [--ui|--screenshots] [name-substring...]   (RUNS=n repeats each fit,
 * default 2; --ui profiles the UI-screenshot corpus instead of the 33 pairs, --screenshots the typical
 * screenshots at the default budget, 256 KiB)
 */
import { Session } from "node:inspector/promises";
import { fitImage } from "../shared/imaging/fit";
import { loadVisionWasmNode } from "./vision-wasm-node";
import { BUDGETS, makeInputs, makeScreenshotInputs, makeUiInputs } from "./vision-inputs";

const wasm = loadVisionWasmNode();
const ui = process.argv.includes("--ui");
const screenshots = process.argv.includes("--screenshots");
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const runs = Number(process.env.RUNS ?? 2);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Innermost matching function name → stage; the first rule that matches a frame wins. */
const RULES: Array<[RegExp, string]> = [
  [/^fidelity$|^decodeJpegRgb$|^resizeRgb$/, "compare"],
  [/^(filterBytes|emitRow|pushRow|finish|wantsRow|StreamingResampler|computeTaps|boxSum.*)$/, "resample"],
  [/^(transform|transformJs|prepareJpeg|SimdJpegKernels)$/, "encode (colour + DCT)"],
  [/^(writeScan|encode|result|raw|block)$/, "encode (scan write)"],
  [
    /^(quantCount|statistics|measure|buildHuffman|estimateAt|sizeAt|huffmanBits|searchPrepared|searchQuality|sampleRateDistortion|quantiseAndCount|chooseTables|errorAt|subsamplingError)$/,
    "search (quantise + count, table choice)",
  ],
  [/^(encodePng|isGrey|pngWithin)$/, "png encode"],
  [
    /^(decodeJpegRows|decodeCheckedFrame|decodeJpeg|decodePngRows|next|refill|ZlibInflater|unfilter|rgbRow|nextLine|flattenRgba|decodeWithPhoton)$/,
    "decode",
  ],
  [/^(checkStructure|verifyImageData|parseChunks|crc32|iccToSrgb|embeddedProfile|openImage)$/, "structure + colour"],
];

function stageOf(stack: string[]): string {
  for (const name of stack) for (const [re, stage] of RULES) if (re.test(name)) return stage;
  return stack.includes("fitImage") ? "other (glue)" : "outside the fit (GC, idle, zlib thread)";
}

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 200 });
const totals = new Map<string, number>();
const perPair: Array<{ pair: string; ms: number; encodes: number; decodes: number; stages: Map<string, number> }> = [];
for (const [name, input] of await (screenshots ? makeScreenshotInputs() : ui ? makeUiInputs() : makeInputs())) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  for (const budget of screenshots ? [262144] : BUDGETS) {
    const bytes = new Uint8Array(input);
    const opts = { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
    await fitImage(bytes, opts, wasm); // warm-up
    await session.post("Profiler.start");
    const t = performance.now();
    let last;
    for (let i = 0; i < runs; i++) last = await fitImage(bytes, opts, wasm);
    const ms = (performance.now() - t) / runs;
    const { profile } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const stages = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const stack: string[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
        stack.push(byId.get(at)!.callFrame.functionName);
      const stage = stageOf(stack);
      const dt = (profile.timeDeltas[i] ?? 0) / 1000 / runs;
      stages.set(stage, (stages.get(stage) ?? 0) + dt);
      totals.set(stage, (totals.get(stage) ?? 0) + dt);
    });
    perPair.push({
      pair: `${name} | ${budget / 1024} KiB`,
      ms,
      encodes: last!.encodeAttempts,
      decodes: last!.decodes,
      stages,
    });
    console.error(`profiled ${name} ${budget / 1024} KiB`);
  }
}
const names = [...totals.keys()].sort((a, b) => totals.get(b)! - totals.get(a)!);
console.log(`| input | budget | fit ms | encodes | decodes | ${names.join(" | ")} |`);
console.log(`|---|---|---:|---:|---:|${names.map(() => "---:").join("|")}|`);
for (const p of perPair)
  console.log(
    `| ${p.pair} | ${p.ms.toFixed(0)} | ${p.encodes} | ${p.decodes} | ${names.map((n) => (p.stages.get(n) ?? 0).toFixed(0)).join(" | ")} |`,
  );
const sum = [...totals.values()].reduce((a, b) => a + b, 0);
console.log(
  `\nShare of all sampled time: ${names.map((n) => `${n} ${((100 * totals.get(n)!) / sum).toFixed(0)} %`).join(", ")}`,
);
