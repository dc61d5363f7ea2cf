/**
 * Workers adapter of the VisionWasm port: workerd imports `.wasm` files as compiled modules, so the
 * codecs are compiled once per isolate here and instantiated per request by shared/vision. MozJPEG
 * (the port's optional `jpegEncoder`) is left out: production fits use our own JPEG encoder, so the
 * bundle does not carry its 250 KB module. The JPEG and WebP decoders are our builds of libjpeg-turbo
 * and libwebp, the PNG inflater is our build of zlib-ng (native/); our own SIMD kernels (`simd`, about 5 KB) make PNG
 * unfiltering, the resampling and the encoder several times faster than the JS fallback.
 */
import jpegDecoder from "../shared/vision/wasm/jpeg.decode.wasm";
import webpDecoder from "../shared/vision/wasm/webp.decode.wasm";
import simd from "../shared/vision/wasm/vision.simd.wasm";
import zlib from "../shared/vision/wasm/zlib.wasm";
import type { VisionWasm } from "../shared/ports";

export const visionWasm: VisionWasm = { jpegDecoder, webpDecoder, zlib, simd };
