/**
 * Deno adapter of the VisionWasm port: the same .wasm files the Workers bundle imports, read from
 * node_modules and compiled once per process; shared/vision instantiates them per request.
 */
import type { VisionWasm } from "../shared/vision/codecs";

const compile = async (path: string) => WebAssembly.compile(await Deno.readFile(new URL(`../node_modules/${path}`, import.meta.url)));

export async function loadVisionWasm(): Promise<VisionWasm> {
  const [jpegDecoder, photon] = await Promise.all([compile("@cwasm/jpeg-turbo/jpeg-turbo.wasm"), compile("@cf-wasm/photon/dist/lib/photon_rs_bg.wasm")]);
  return { jpegDecoder, photon };
}
