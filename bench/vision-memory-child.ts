/**
 * One fit of one image file in a Node process whose V8 heap is capped by the parent
 * (bench/vision-memory.bench.ts). Prints one JSON line: the WASM peak and the ArrayBuffer bytes
 * alive at the end of the call. Exits non-zero (V8 out of memory) when the cap is too small.
 */
import { readFileSync } from "node:fs";
import { fitImage } from "../shared/vision/fit";
import { loadVisionWasmNode } from "./vision-wasm-node";

const [file, budget] = process.argv.slice(2);
const input = new Uint8Array(readFileSync(file!));
const { jpegEncoder: _unused, ...wasm } = loadVisionWasmNode(); // production configuration: no MozJPEG
const before = process.memoryUsage().arrayBuffers;
const result = await fitImage(input, { embedTargetBytes: Number(budget), maxLongEdge: 1568, maxInputPixels: 14_745_600 }, wasm);
const after = process.memoryUsage();
console.log(JSON.stringify({ wasmPeakBytes: result.wasmPeakBytes, arrayBuffersBytes: after.arrayBuffers - before + input.byteLength, width: result.width, height: result.height }));
