/** The bench's workerd side (bench/vision-wasm-runtimes.ts bundles it): GET /?op=<op>&reps=<n>, or /?op=v8 for the V8 facts. */
import jpegDecoder from "jpeg.decode.wasm";
import light from "light.png";
import { v8Facts } from "natives.js";
import session from "session.png";
import simd from "vision.simd.wasm";
import webpDecoder from "webp.decode.wasm";
import zlib from "zlib.wasm";
import { runOp } from "./ops";

const wasm = { jpegDecoder, webpDecoder, zlib, simd };
const pngs = { session: new Uint8Array(session as ArrayBuffer), light: new Uint8Array(light as ArrayBuffer) };

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const op = url.searchParams.get("op");
    if (!op) return new Response("ok");
    if (op === "v8") return Response.json(v8Facts(simd));
    return new Response(String(await runOp(wasm, pngs, op, Number(url.searchParams.get("reps") ?? 1))));
  },
};
