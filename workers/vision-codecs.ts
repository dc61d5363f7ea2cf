/**
 * Workers adapter of the VisionWasm port: workerd imports `.wasm` files as compiled modules, so the
 * codecs are compiled once per isolate here and instantiated per request by shared/imaging. The JPEG and WebP decoders are our builds of libjpeg-turbo
 * and libwebp, the PNG inflater is our build of zlib-ng (native/); our own SIMD kernels (`simd`, about 5 KB) make PNG
 * unfiltering, the resampling and the encoder several times faster than the JS fallback.
 */
import jpegDecoder from "../shared/imaging/wasm/jpeg.decode.wasm";
import webpDecoder from "../shared/imaging/wasm/webp.decode.wasm";
import simd from "../shared/imaging/wasm/vision.simd.wasm";
import zlib from "../shared/imaging/wasm/zlib.wasm";
import type { VisionWasm } from "../shared/ports";

export const visionWasm: VisionWasm = { jpegDecoder, webpDecoder, zlib, simd };
