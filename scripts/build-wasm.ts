/**
 * Compiles our WAT sources (shared/imaging/wasm/*.wat) to the committed .wasm files next to them with
 * wabt, so the runtimes load a plain binary and nothing compiles WAT at request time.
 * Run: npm run build:wasm (test/node/build.test.ts fails when a committed .wasm is stale).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileWat } from "./wat";

const dir = new URL("../shared/imaging/wasm", import.meta.url).pathname;
for (const name of readdirSync(dir).filter((f) => f.endsWith(".wat"))) {
  const bytes = await compileWat(name, readFileSync(join(dir, name), "utf8"));
  const out = join(dir, name.replace(/\.wat$/, ".wasm"));
  writeFileSync(out, bytes);
  // Compiling here catches what wabt's validator lets through but V8 would refuse.
  await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
  console.log(`${name} -> ${out} (${bytes.length} bytes)`);
}
