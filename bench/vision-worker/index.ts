/**
 * Bench-only Worker: runs `fitImage` inside workerd on the POSTed image bytes and answers with the
 * fitted JPEG as the body and the fit's numbers in `x-fit` (JSON). Started by bench/vision.bench.ts
 * through `wrangler dev`; timing is taken on the Node side (workerd's clock only moves on I/O).
 * `?mode=decode` only decodes a PNG (rows dropped), `?mode=resample` decodes and resamples it to the
 * 1568 px cap (not encoded), `?mode=inflate` only inflates its IDAT data:
 * the bench's breakdown of where a PNG fit's time goes inside workerd. `?mode=header` only reads
 * the header (a pass-through before it was verified), and `&region=full` fits with a region of the
 * whole image but its last row (a region of the whole image is no region and passes through), which
 * takes the decode path: bench/vision-passthrough.bench.ts.
 */
import { fitImage } from "../../shared/imaging/fit";
import { readImageHeader } from "../../shared/media/image-header";
import { decodePngRows, parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import { ZlibInflater } from "../../shared/imaging/codecs/png/png.inflate";
import { StreamingResampler } from "../../shared/imaging/resample";
import { SimdPool } from "../../shared/imaging/wasm/simd.instances";
import { visionWasm } from "../../workers/vision-codecs";
import jpegEncoder from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import { mozJpegFit } from "../mozjpeg.encode";

/** The production codecs without our SIMD kernels: the JS fallback, for the before/after rows. */
const { simd: _simd, ...withoutSimd } = visionWasm;

/** A resampler that wants every row and drops it: decode cost alone. */
const sink = () => ({ wantsRow: () => true, pushRow: () => undefined }) as unknown as StreamingResampler;

/** Inflates the PNG's IDAT data through workerd's DecompressionStream (the decoder's inflate before zlib-ng). */
async function inflateByStream(png: Uint8Array): Promise<string> {
  const stream = new DecompressionStream("deflate");
  const writer = stream.writable.getWriter();
  const feeding = (async () => {
    for (const chunk of parseChunks(png).idat) await writer.write(chunk as Uint8Array<ArrayBuffer>);
    await writer.close();
  })();
  let total = 0,
    chunks = 0;
  const reader = stream.readable.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    total += r.value.length;
    chunks++;
  }
  await feeding;
  return `${total} bytes in ${chunks} chunks`;
}

/** Inflates the PNG's IDAT data as the decoder does (zlib-ng in WASM): the decode's floor. */
function inflateByZlibNg(png: Uint8Array): string {
  const inflater = new ZlibInflater(visionWasm.zlib, parseChunks(png).idat);
  let total = 0;
  for (let bytes = inflater.next(); bytes; bytes = inflater.next()) total += bytes.length;
  return `${total} bytes`;
}

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST")
      return new Response(
        "POST the image bytes; ?budget=<bytes>&encoder=baseline|mozjpeg&simd=0|1[&mode=decode|inflate|header][&region=full]",
        { status: 405 },
      );
    const url = new URL(request.url);
    const budget = Number(url.searchParams.get("budget") ?? 262144);
    // MozJPEG only for this bench's comparison rows.
    const settings = url.searchParams.get("encoder") === "mozjpeg" ? mozJpegFit(jpegEncoder) : {};
    const wasm = url.searchParams.get("simd") === "0" ? withoutSimd : visionWasm;
    const bytes = new Uint8Array(await request.arrayBuffer());
    const mode = url.searchParams.get("mode");
    if (mode === "inflate-stream") return new Response(await inflateByStream(bytes));
    if (mode === "inflate") return new Response(inflateByZlibNg(bytes));
    if (mode === "header") return new Response(JSON.stringify(readImageHeader(bytes)));
    if (mode === "decode") {
      decodePngRows(parseChunks(bytes), sink, wasm);
      return new Response("decoded");
    }
    if (mode === "resample") {
      // Decoded and resampled to the 1568 px cap as a fit renders it (a fit's SimdPool), not encoded.
      const pool = wasm === visionWasm && visionWasm.simd ? new SimdPool(visionWasm.simd) : undefined;
      const { resampler } = decodePngRows(
        parseChunks(bytes),
        (w, h) => {
          const scale = Math.min(1, 1568 / Math.max(w, h));
          const size = [Math.round(w * scale), Math.round(h * scale)] as const;
          return new StreamingResampler(w, h, { x: 0, y: 0, width: w, height: h }, size[0], size[1], pool);
        },
        wasm,
      );
      return new Response(`${resampler.finish().length} bytes`);
    }
    const header = url.searchParams.get("region") === "full" ? readImageHeader(bytes) : undefined;
    const region: [number, number, number, number] | undefined = header && [0, 0, header.width, header.height - 1];
    const out = await fitImage(
      bytes,
      { embedTargetBytes: budget, maxLongEdge: 1568, maxInputPixels: 16_777_216, region },
      wasm,
      settings,
    );
    const fit = {
      attempts: out.encodeAttempts,
      dataUrlBytes: out.dataUrlBytes,
      width: out.width,
      height: out.height,
      quality: out.quality,
      jpegTables: out.jpegTables,
      chroma: out.chroma,
      mediaType: out.mediaType,
      wasmPeakBytes: out.wasmPeakBytes,
      simd: out.simd === true,
      passedThrough: out.passedThrough,
    };
    return new Response(out.data as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": out.mediaType, "x-fit": JSON.stringify(fit) },
    });
  },
};
