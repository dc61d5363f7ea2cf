/** Compiles one of our WAT sources to WebAssembly bytes with wabt (SIMD on); shared by the build and its test. */
import wabtInit from "wabt";

export async function compileWat(name: string, source: string): Promise<Uint8Array> {
  const wabt = await wabtInit();
  const parsed = wabt.parseWat(name, source, { simd: true });
  try {
    parsed.resolveNames();
    parsed.validate();
    return new Uint8Array(parsed.toBinary({ log: false, write_debug_names: false }).buffer);
  } finally {
    parsed.destroy();
  }
}
