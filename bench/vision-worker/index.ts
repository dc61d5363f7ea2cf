/**
 * Bench-only Worker: runs `fitImage` inside workerd on the POSTed image bytes and answers with the
 * fitted JPEG as the body and the fit's numbers in `x-fit` (JSON). Started by bench/vision.bench.ts
 * through `wrangler dev`; timing is taken on the Node side (workerd's clock only moves on I/O).
 */
import { fitImage } from "../../shared/vision/fit";
import { visionWasm } from "../../workers/vision-codecs";
import jpegEncoder from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import type { JpegEncodeSettings } from "../../shared/vision/jpeg.settings";
import type { VisionWasm } from "../../shared/vision/codecs";

/** The production codecs plus MozJPEG, which only this bench's comparison rows use. */
const benchWasm: VisionWasm = { ...visionWasm, jpegEncoder };
/** The same without our SIMD kernels: the JS fallback, for the before/after rows. */
const { simd: _simd, ...withoutSimd } = benchWasm;

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("POST the image bytes; ?budget=<bytes>&encoder=baseline|mozjpeg&simd=0|1", { status: 405 });
    const url = new URL(request.url);
    const budget = Number(url.searchParams.get("budget") ?? 262144);
    const encoder = url.searchParams.get("encoder") === "mozjpeg" ? "mozjpeg" : "baseline";
    const settings: JpegEncodeSettings = { encoder, progressive: false, trellis: false };
    const wasm = url.searchParams.get("simd") === "0" ? withoutSimd : benchWasm;
    const bytes = new Uint8Array(await request.arrayBuffer());
    const out = await fitImage(bytes, { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216 }, wasm, settings);
    const fit = {
      attempts: out.encodeAttempts, dataUrlBytes: out.dataUrlBytes, width: out.width, height: out.height,
      quality: out.quality, wasmPeakBytes: out.wasmPeakBytes, simd: out.simd === true,
    };
    return new Response(out.data as Uint8Array<ArrayBuffer>, { headers: { "content-type": out.mediaType, "x-fit": JSON.stringify(fit) } });
  },
};
