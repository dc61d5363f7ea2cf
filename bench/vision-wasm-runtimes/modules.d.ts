/** The modules the bench's generated workerd config gives its worker (bench/vision-wasm-runtimes.ts). */
declare module "*.png" {
  const bytes: ArrayBuffer;
  export default bytes;
}
declare module "natives.js" {
  /** Facts only V8's natives syntax reads: the WASM trap handler, the tier `hfilter` runs in. */
  export function v8Facts(module: WebAssembly.Module): { trapHandler: boolean; hfilterOptimised: boolean };
}
