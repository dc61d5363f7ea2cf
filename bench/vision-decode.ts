/**
 * PNG decode timing (Node), decode only: rows go to a resampler that drops them, so the numbers are
 * inflate + unfilter + conversion, with our SIMD kernels and with the JS fallback.
 * Run: node --import tsx bench/vision-decode.ts file.png... (default: the profile's cached 5K and phone PNGs).
 * The inflate is zlib-ng in WASM (png.inflate.ts), as in workerd; the bench's "PNG decode alone in
 * workerd" table (bench/vision.bench.ts) has the same decode measured there.
 */
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodePngRows, parseChunks } from "../shared/imaging/codecs/png/png.decode";
import type { StreamingResampler } from "../shared/imaging/resample";

// Only the modules the PNG decode uses: compiling the other codecs keeps V8's background threads busy.
const simd = new WebAssembly.Module(readFileSync(new URL("../shared/imaging/wasm/vision.simd.wasm", import.meta.url)));
const zlib = new WebAssembly.Module(readFileSync(new URL("../shared/imaging/wasm/zlib.wasm", import.meta.url)));
const files = process.argv.slice(2);
if (files.length === 0) files.push(...["shot5k", "phone"].map((name) => join(tmpdir(), `vision-profile-${name}.bin`)));
const sink = () => ({ wantsRow: () => true, pushRow: () => undefined }) as unknown as StreamingResampler;
const runs = Number(process.env.RUNS ?? 7);
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  for (const [label, module] of [
    ["simd", simd],
    ["js", undefined],
  ] as const) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      decodePngRows(parseChunks(bytes), sink, { zlib, simd: module });
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${file} ${label}: median ${times[runs >> 1]!.toFixed(0)} ms (${times.map((t) => t.toFixed(0)).join(" ")})`,
    );
  }
}
