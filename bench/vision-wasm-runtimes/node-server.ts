/** The bench's Node side (bundled by bench/vision-wasm-runtimes.ts): the worker's API over node:http. */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { runOp } from "./ops";

const dir = process.env.WASM_DIR!;
const compile = (name: string) => new WebAssembly.Module(readFileSync(join(dir, name)));
const wasm = {
  jpegDecoder: compile("jpeg.decode.wasm"),
  webpDecoder: compile("webp.decode.wasm"),
  zlib: compile("zlib.wasm"),
  simd: compile("vision.simd.wasm"),
};
const pngs = {
  session: new Uint8Array(readFileSync(join(process.env.PNG_DIR!, "session.png"))),
  light: new Uint8Array(readFileSync(join(process.env.PNG_DIR!, "light.png"))),
};
// Built at run time: the natives syntax is not TypeScript (the child runs with --allow-natives-syntax).
const trapHandler = new Function("return %IsWasmTrapHandlerEnabled()") as () => boolean;

createServer((request, response) => {
  const url = new URL(request.url!, "http://localhost");
  const op = url.searchParams.get("op");
  if (!op) return void response.end("ok");
  if (op === "v8") return void response.end(JSON.stringify({ v8: process.versions.v8, trapHandler: trapHandler() }));
  runOp(wasm, pngs, op, Number(url.searchParams.get("reps") ?? 1)).then(
    (n) => response.end(String(n)),
    (e: Error) => {
      response.statusCode = 500;
      response.end(e.message);
    },
  );
}).listen(Number(process.env.PORT), "127.0.0.1");
