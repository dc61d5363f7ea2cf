/**
 * Workers adapter of the VisionWasm port: workerd imports `.wasm` files as compiled modules, so the
 * codecs are compiled once per isolate here and instantiated per request by shared/vision.
 */
import jpegDecoder from "@cwasm/jpeg-turbo/jpeg-turbo.wasm";
import jpegEncoder from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import photon from "@cf-wasm/photon/photon.wasm";
import type { VisionWasm } from "../shared/vision/codecs";

export const visionWasm: VisionWasm = { jpegDecoder, jpegEncoder, photon };
