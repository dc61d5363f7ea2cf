import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { prepareJpeg } from "../../shared/imaging/jpeg.baseline";
import { maxPayloadBytes } from "../../shared/media/data-url";
import { photoPixels, screenshotPixels } from "../fixtures/images";

/** The committed build of shared/imaging/wasm/vision.simd.wat (npm run build:wasm). */
const simd = new WebAssembly.Module(
  readFileSync(new URL("../../shared/imaging/wasm/vision.simd.wasm", import.meta.url)),
);

/** Highest quality in [30, 100] whose exact size fits `maxBytes`, by bisection over sizeAt. */
function exactQuality(prepared: ReturnType<typeof prepareJpeg>, maxBytes: number): number | undefined {
  if (prepared.sizeAt(30) > maxBytes) return undefined;
  let low = 30,
    high = 100;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (prepared.sizeAt(mid) <= maxBytes) low = mid;
    else high = mid - 1;
  }
  return low;
}

describe("the table choice says where the budget falls (the search's first look)", () => {
  const images: Array<[string, Uint8Array, number, number]> = [
    ["screenshot", screenshotPixels(1280, 800, 7), 1280, 800],
    ["photo", photoPixels(1200, 900, 3), 1200, 900],
  ];
  for (const [name, rgb, w, h] of images) {
    it(`${name}: within 4 qualities of the highest that fits, at 64 KiB, 256 KiB and 1 MiB`, () => {
      for (const budget of [65_536, 262_144, 1_048_576]) {
        const maxBytes = maxPayloadBytes("image/jpeg", budget);
        const prepared = prepareJpeg(rgb, w, h, simd);
        expect(prepared.budgetQuality).toBeUndefined();
        prepared.chooseTables(maxBytes, 30, 100);
        const exact = exactQuality(prepared, maxBytes);
        if (exact === undefined) continue;
        expect(prepared.budgetQuality).toBeDefined();
        expect(
          Math.abs(prepared.budgetQuality! - exact),
          `${budget}: ${prepared.budgetQuality} vs ${exact}`,
        ).toBeLessThanOrEqual(4);
      }
    });
  }
});
