/**
 * One fit of one image file in a Node process whose V8 heap is capped by the parent
 * (bench/vision-memory.bench.ts). Prints one JSON line: the outcome (fitted, passed through, or
 * the refusal), the WASM peak, the CPU time of the fit, the ArrayBuffer bytes alive at the end and
 * the process's peak resident memory.
 * Exits non-zero (V8 out of memory) when the cap is too small.
 */
import { readFileSync } from "node:fs";
import { cpuMsSince } from "./stats";
import { AppError } from "../shared/http/errors";
import { fitImage } from "../shared/imaging/fit";
import { loadVisionWasmNode } from "./vision-wasm-node";

const [file, budget] = process.argv.slice(2);
const input = new Uint8Array(readFileSync(file!));
const { jpegEncoder: _unused, ...wasm } = loadVisionWasmNode(); // production configuration: no MozJPEG
const before = process.memoryUsage().arrayBuffers;
const cpuBefore = process.cpuUsage();
const opts = { embedTargetBytes: Number(budget), maxLongEdge: 1568, maxInputPixels: 14_745_600 };
let outcome: Record<string, unknown>;
try {
  const result = await fitImage(input, opts, wasm);
  outcome = {
    outcome: result.passedThrough ? "passed through" : `fitted ${result.width}x${result.height}`,
    wasmPeakBytes: result.wasmPeakBytes,
  };
} catch (error) {
  // A refusal is an outcome too (the adversarial set); anything else is a crash and fails the run.
  if (!(error instanceof AppError)) throw error;
  // A refusal carries no WASM figure: a decoder's instance may have run before it.
  outcome = { outcome: `${error.status} ${error.code}`, message: error.message };
}
const cpuMs = cpuMsSince(cpuBefore);
const after = process.memoryUsage();
console.log(
  JSON.stringify({
    ...outcome,
    cpuMs,
    arrayBuffersBytes: after.arrayBuffers - before + input.byteLength,
    maxRssBytes: peakRssBytes(),
  }),
);

/**
 * This process's peak resident memory since its exec (VmHWM). Not `resourceUsage().maxRSS`: Linux
 * carries that across exec, so a child spawned by a parent holding large inputs reported the
 * parent's resident size, not its own (the "RSS excess" of the earlier tables).
 */
function peakRssBytes(): number {
  const line = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
  return Number(line?.[1] ?? Number.NaN) * 1024;
}
