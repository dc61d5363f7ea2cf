import { describe, expect, it, vi } from "vitest";
import { photoPixels } from "../fixtures/images";

type Resample = typeof import("../../shared/imaging/resample");

/** The resampler module as a new isolate would load it: no taps kept from earlier renders. */
async function freshResampler(): Promise<Resample> {
  vi.resetModules();
  return import("../../shared/imaging/resample");
}

/** `window` of the 1600x1000 photo resampled to 700x430 (JS path: the taps are all there is to differ). */
function render(m: Resample, rgb: Uint8Array, window: { x: number; y: number; width: number; height: number }) {
  const r = new m.StreamingResampler(1600, 1000, window, 700, 430);
  for (let row = 0; row < 1000; row++) r.pushRow(row, rgb, row * 1600 * 3);
  return r.finish();
}

describe("the resampler's kept taps", () => {
  it("a render after others of the same sizes gives the bytes it gives in a new isolate", async () => {
    const rgb = photoPixels(1600, 1000, 9);
    const windows = [
      { x: 0, y: 0, width: 1400, height: 860 },
      // The same sizes, the window moved by a fraction and by whole pixels: other taps.
      { x: 0.25, y: 0.5, width: 1400, height: 860 },
      { x: 200, y: 140, width: 1400, height: 860 },
      // Another size that lands on the same output size.
      { x: 0, y: 0, width: 1600, height: 1000 },
    ];
    const alone = [];
    for (const w of windows) alone.push(render(await freshResampler(), rgb, w));
    const shared = await freshResampler();
    // Each window after the others, twice round: every render but the first reads kept taps.
    for (let round = 0; round < 2; round++)
      for (const [i, w] of windows.entries()) expect(Buffer.compare(render(shared, rgb, w), alone[i]!)).toBe(0);
    expect(Buffer.compare(alone[0]!, alone[1]!)).not.toBe(0);
    expect(Buffer.compare(alone[1]!, alone[2]!)).not.toBe(0);
  });
});
