/**
 * A fit's CPU in this checkout beside another's (`BEFORE`, e.g. /work/main), side by side in one
 * run: the typical screenshots (bench/vision-inputs.ts makeScreenshotInputs) and the computer-use
 * session's screenshot (bench/computer-use-session.ts) fitted at 256 KiB. Per round, each side in
 * Node (our SIMD kernels, process CPU time) and each side's bench Worker in workerd
 * (bench/vision-worker under `wrangler dev`: workerd CPU and minor page faults of every workerd
 * process of the side, less a header-only request's, which is the upload's share), then sharp with
 * our algorithm on one thread (bench/vision-sharp.ts); the order of the sides alternates by round.
 * Medians of ROUNDS (default 7) after a warm-up round; the bytes each side fitted are compared.
 * Options (environment):
 * - `BEFORE=<checkout>`: the other side (its node_modules installed); without it, this checkout alone.
 * - `VISION_SIDES=workerd`: workerd only (no Node fits, no sharp).
 * - `VISION_SIDES_HALF=1`: also the decode and resample half alone in workerd (the bench
 *   Worker's `?mode=resample`: decoded and resampled to the 1568 px cap, not encoded).
 * - `VISION_SIDES_SESSION_SEED=<n>`: which of the session's screenshots (default 1).
 * Run: BEFORE=/work/main npx tsx bench/vision-before-after.ts [name-substring...]
 * (bench/vision-workerd-sides.ts runs this with VISION_SIDES=workerd.)
 */
import { loadavg } from "node:os";
import { resolve } from "node:path";
import sharp from "sharp";
import type { FitResult } from "../shared/ports";
import { screenshot } from "./computer-use-session";
import { cpuMsSince, median } from "./stats";
import { makeScreenshotInputs } from "./vision-inputs";
import { withSharp } from "./vision-sharp";
import { startWorker } from "./vision-worker/start";
import { workerdFaults } from "./workerd-processes";

const before = process.env.BEFORE;
const rounds = Number(process.env.ROUNDS ?? 7);
const inNode = process.env.VISION_SIDES !== "workerd";
const half = process.env.VISION_SIDES_HALF === "1";
const only = process.argv.slice(2);
const budget = 256 * 1024;
const opts = { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
sharp.concurrency(1);

type Fit = (bytes: Uint8Array, o: typeof opts, wasm: unknown) => Promise<FitResult>;
const roots: Array<[string, string]> = [
  ...(before ? ([["before", resolve(before)]] as Array<[string, string]>) : []),
  [before ? "after" : "this tree", resolve(".")],
];
const sides = await Promise.all(
  roots.map(async ([label, root]) => {
    const node = inNode
      ? {
          fitImage: ((await import(`${root}/shared/imaging/fit.ts`)) as { fitImage: Fit }).fitImage,
          wasm: (await import(`${root}/bench/vision-wasm-node.ts`)).loadVisionWasmNode() as unknown,
        }
      : null;
    return { label, node, worker: await startWorker(root) };
  }),
);
type Worker = (typeof sides)[number]["worker"];

/** A POST to the bench Worker, tried again where the connection broke (a loaded box drops one now and then). */
async function post(url: string, body: Uint8Array): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { method: "POST", body: body as Uint8Array<ArrayBuffer> });
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** workerd's CPU ms and minor page faults for one request to `worker`, and its body. */
async function measure(worker: Worker, query: string, bytes: Uint8Array) {
  const cpu = worker.cpuMs()!;
  const faults = workerdFaults(worker.group)!;
  const response = await post(`${worker.url}/?${query}`, bytes);
  const body = Buffer.from(await response.arrayBuffer());
  if (!response.ok) throw new Error(`the bench Worker answered ${response.status}`);
  return { cpu: worker.cpuMs()! - cpu, faults: workerdFaults(worker.group)! - faults, body };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
try {
  const inputs = await makeScreenshotInputs();
  const seed = Number(process.env.VISION_SIDES_SESSION_SEED ?? 1);
  inputs.push(["session 1920x1080 light PNG", Buffer.from(await screenshot(seed, false), "base64")]);
  console.log(`load average at the start: ${load()}; ${rounds} rounds, medians\n`);
  const columns = sides.flatMap(({ label }) => [
    ...(inNode ? [`Node CPU ms ${label}`] : []),
    `workerd CPU ms ${label}`,
    `workerd page faults ${label}`,
    ...(half ? [`decode+resample workerd CPU ms ${label}`] : []),
  ]);
  const last = sides.at(-1)!.label;
  if (inNode) columns.push("sharp CPU ms", `${last} / sharp, Node`, `${last} / sharp, workerd`);
  columns.push("same bytes");
  console.log(
    `| input | ${columns.join(" | ")} |\n|---|${columns.map((c) => (c === "same bytes" ? "---" : "---:")).join("|")}|`,
  );
  for (const [name, input] of inputs) {
    if (only.length && !only.some((o) => name.includes(o))) continue;
    const bytes = new Uint8Array(input);
    const got = sides.map(() => ({
      node: [] as number[],
      cpu: [] as number[],
      faults: [] as number[],
      half: [] as number[],
    }));
    const theirs: number[] = [];
    const out: string[] = [];
    for (let round = -1; round < rounds; round++) {
      for (let i = 0; i < sides.length; i++) {
        const k = round % 2 ? sides.length - 1 - i : i;
        const side = sides[k]!;
        let nodeMs = 0;
        if (side.node) {
          const start = process.cpuUsage();
          const fit = await side.node.fitImage(bytes, opts, side.node.wasm);
          nodeMs = cpuMsSince(start);
          out.push(Buffer.from(fit.data).toString("base64"));
        }
        const header = await measure(side.worker, "mode=header", bytes);
        const fit = await measure(side.worker, `budget=${budget}`, bytes);
        out.push(fit.body.toString("base64"));
        const resampled = half ? await measure(side.worker, "mode=resample", bytes) : null;
        if (round < 0) continue; // warm-up
        got[k]!.node.push(nodeMs);
        got[k]!.cpu.push(fit.cpu - header.cpu);
        got[k]!.faults.push(fit.faults - header.faults);
        if (resampled) got[k]!.half.push(resampled.cpu - header.cpu);
      }
      if (!inNode) continue;
      const start = process.cpuUsage();
      await withSharp(input, budget);
      if (round >= 0) theirs.push(cpuMsSince(start));
    }
    const m = (a: number[]) => median(a);
    const cells = got.flatMap((g) => [
      ...(inNode ? [m(g.node).toFixed(1)] : []),
      m(g.cpu).toFixed(1),
      String(m(g.faults)),
      ...(half ? [m(g.half).toFixed(1)] : []),
    ]);
    if (inNode) {
      const after = got.at(-1)!;
      cells.push(
        m(theirs).toFixed(1),
        `${(m(after.node) / m(theirs)).toFixed(2)}x`,
        `${(m(after.cpu) / m(theirs)).toFixed(2)}x`,
      );
    }
    cells.push(new Set(out).size === 1 ? "yes" : "NO");
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
  console.log(`\nload average at the end: ${load()}`);
} finally {
  for (const side of sides) side.worker.stop();
}
