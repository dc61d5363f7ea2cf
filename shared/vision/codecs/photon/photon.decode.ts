/**
 * WebP decodes through photon, in an instance created for this call only (GIF and interlaced PNG
 * have row decoders of our own).
 * @cf-wasm/photon's own glue keeps one module-level instance whose memory only grows (and a panic
 * poisons it), so we bind the four exports we need ourselves; the instance is garbage afterwards.
 * photon decodes animations to their first frame.
 */
import { invalidImage } from "../../../media/image-header";
import { decodeCallerBytes, type DecodeStats, type ResamplerFactory } from "../codec";
import type { StreamingResampler } from "../../resample";

interface PhotonExports {
  memory: WebAssembly.Memory;
  __wbindgen_externrefs: WebAssembly.Table;
  __wbindgen_start(): void;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __wbg_photonimage_free(ptr: number, owned: number): void;
  photonimage_new_from_byteslice(ptr: number, len: number): number;
  photonimage_get_width(ptr: number): number;
  photonimage_get_height(ptr: number): number;
  photonimage_get_raw_pixels(ptr: number): [number, number];
}

/**
 * photon decodes a whole frame to RGBA and copies it out (about 15 bytes of WASM memory per pixel,
 * docs/benchmarks.md "Isolate memory"), so what it decodes (WebP) gets a lower cap than
 * max_input_pixels.
 */
export const PHOTON_MAX_PIXELS = 6_000_000;

class PhotonFailure extends Error {}

/** Binds only the imports the decode path can reach; anything else means photon went somewhere unexpected. */
function instantiate(module: WebAssembly.Module): PhotonExports {
  let exports: PhotonExports | undefined;
  const handlers: Record<string, (...args: number[]) => unknown> = {};
  for (const entry of WebAssembly.Module.imports(module)) {
    const name = entry.name;
    const base = name.replace(/_[0-9a-f]{16}$/, "");
    let handler: (...args: never[]) => unknown;
    if (name === "__wbindgen_init_externref_table") {
      handler = () => {
        const table = exports!.__wbindgen_externrefs;
        const offset = table.grow(4);
        table.set(0, undefined);
        table.set(offset, undefined);
        table.set(offset + 1, null);
        table.set(offset + 2, true);
        table.set(offset + 3, false);
      };
    } else if (base === "__wbg___wbindgen_throw") {
      handler = (ptr: number, len: number) => {
        throw new PhotonFailure(new TextDecoder().decode(new Uint8Array(exports!.memory.buffer, ptr, len)));
      };
    } else if (base === "__wbg_new") {
      // The panic hook builds an Error to read its stack; the other `new` (Uint8Array) is unreachable here.
      handler = () => new Error();
    } else if (base === "__wbg_stack") {
      handler = (retptr: number) => {
        const view = new DataView(exports!.memory.buffer);
        view.setInt32(retptr + 4, 0, true);
        view.setInt32(retptr, 1, true);
      };
    } else if (base === "__wbg_error") {
      handler = (ptr: number, len: number) => exports!.__wbindgen_free(ptr, len, 1);
    } else {
      handler = () => {
        throw new PhotonFailure(`photon called ${base}, which the decode path does not provide`);
      };
    }
    handlers[name] = handler as (...args: number[]) => unknown;
  }
  const instance = new WebAssembly.Instance(module, { "./photon_rs_bg.js": handlers });
  exports = instance.exports as unknown as PhotonExports;
  exports.__wbindgen_start();
  return exports;
}

/** Decodes with photon and streams the RGB rows (alpha flattened on white) into the resampler. */
export function decodeWithPhoton(
  bytes: Uint8Array,
  format: string,
  module: WebAssembly.Module,
  makeResampler: ResamplerFactory,
): { stats: DecodeStats; resampler: StreamingResampler } {
  const photon = instantiate(module);
  // Everything photon does with the caller's bytes, up to handing the pixels over, is its decode.
  const { width, height, pixelsPtr, pixelsLen } = decodeCallerBytes(
    "photon",
    format,
    "could not be decoded: its data is corrupt",
    () => {
      const src = photon.__wbindgen_malloc(bytes.length, 1);
      new Uint8Array(photon.memory.buffer, src, bytes.length).set(bytes);
      const image = photon.photonimage_new_from_byteslice(src, bytes.length);
      const [pixelsPtr, pixelsLen] = photon.photonimage_get_raw_pixels(image);
      const decoded = {
        width: photon.photonimage_get_width(image) >>> 0,
        height: photon.photonimage_get_height(image) >>> 0,
        pixelsPtr,
        pixelsLen,
      };
      photon.__wbg_photonimage_free(image, 0);
      return decoded;
    },
  );
  if (pixelsLen !== width * height * 4)
    throw invalidImage(format, `decoded to ${pixelsLen} bytes, not the ${width}x${height} it declares`);
  const resampler = makeResampler(width, height);
  const rgba = new Uint8Array(photon.memory.buffer, pixelsPtr, pixelsLen);
  const rgb = new Uint8Array(width * 3);
  for (let row = 0; row < height; row++) {
    if (!resampler.wantsRow(row)) continue;
    let p = row * width * 4;
    for (let x = 0, o = 0; x < width; x++, p += 4, o += 3) {
      const a = rgba[p + 3]!;
      if (a === 255) {
        rgb[o] = rgba[p]!;
        rgb[o + 1] = rgba[p + 1]!;
        rgb[o + 2] = rgba[p + 2]!;
      } else {
        const keep = 255 - a;
        rgb[o] = ((rgba[p]! * a + 255 * keep) / 255 + 0.5) | 0;
        rgb[o + 1] = ((rgba[p + 1]! * a + 255 * keep) / 255 + 0.5) | 0;
        rgb[o + 2] = ((rgba[p + 2]! * a + 255 * keep) / 255 + 0.5) | 0;
      }
    }
    resampler.pushRow(row, rgb);
  }
  return {
    stats: { wasmBytes: photon.memory.buffer.byteLength, decodedWidth: width, decodedHeight: height },
    resampler,
  };
}
