/** The emscripten factory of @jsquash/jpeg's MozJPEG encoder (its own .d.ts needs emscripten's global types). */
declare module "@jsquash/jpeg/codec/enc/mozjpeg_enc.js" {
  const factory: (overrides: Record<string, unknown>) => Promise<unknown>;
  export default factory;
}
