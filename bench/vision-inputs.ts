/**
 * The vision bench's inputs, generated deterministically (test/fixtures/images.ts) and encoded with
 * sharp: shared by bench/vision.bench.ts (the timed, side-by-side run) and bench/vision-profile.ts
 * (where the time goes), so both look at the same 33 input/budget pairs.
 */
import sharp from "sharp";
import { photoPixels, screenshotPixels, withAlpha } from "../test/fixtures/images";
import { UI_SCREENSHOTS, uiScreenshotPixels } from "../test/fixtures/ui-screenshots";

export const BUDGETS = [64 * 1024, 256 * 1024, 1024 * 1024];

/** Doubles each channel's distance from mid-grey: the saturated colours where P3 and sRGB differ. */
function saturated(rgb: Uint8Array): Uint8Array {
  return rgb.map((v) => Math.max(0, Math.min(255, (v - 128) * 2 + 128)));
}

export async function makeInputs(): Promise<Array<[string, Buffer]>> {
  const raw = (rgb: Uint8Array, width: number, height: number) =>
    sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
  return [
    ["12 MP photo JPEG 4032x3024", await raw(photoPixels(4032, 3024), 4032, 3024).jpeg({ quality: 92 }).toBuffer()],
    ["5K screenshot PNG 5120x2880", await raw(screenshotPixels(5120, 2880), 5120, 2880).png().toBuffer()],
    [
      "phone table PNG 1170x2532",
      await raw(screenshotPixels(1170, 2532, 5), 1170, 2532)
        .png()
        .toBuffer(),
    ],
    // What screenshot tools write: RGBA, libpng's adaptive row filters (sharp's default is filter None).
    [
      "5K screenshot PNG 5120x2880, RGBA adaptive-filtered",
      await sharp(Buffer.from(withAlpha(screenshotPixels(5120, 2880))), {
        raw: { width: 5120, height: 2880, channels: 4 },
      })
        .png({ adaptiveFiltering: true })
        .toBuffer(),
    ],
    [
      "3 MP photo JPEG 2048x1536",
      await raw(photoPixels(2048, 1536, 3), 2048, 1536)
        .jpeg({ quality: 92 })
        .toBuffer(),
    ],
    // Widths and heights that do not divide by 8 (where an n/8 decode mapped by size ratio drifts),
    // and 3136, whose half is exactly the cap (where a DCT scale of 4/8 left Lanczos nothing to do).
    [
      "photo JPEG 3005x2007",
      await raw(photoPixels(3005, 2007, 5), 3005, 2007)
        .jpeg({ quality: 92 })
        .toBuffer(),
    ],
    [
      "photo JPEG 2725x2225",
      await raw(photoPixels(2725, 2225, 6), 2725, 2225)
        .jpeg({ quality: 92 })
        .toBuffer(),
    ],
    [
      "photo JPEG 3136x2352",
      await raw(photoPixels(3136, 2352, 7), 3136, 2352)
        .jpeg({ quality: 92 })
        .toBuffer(),
    ],
    [
      "JPEG screenshot 4704x2646",
      await raw(screenshotPixels(4704, 2646, 8), 4704, 2646)
        .jpeg({ quality: 90 })
        .toBuffer(),
    ],
    // What iPhones and Macs write: Display P3 (sharp embeds its P3 profile and converts to it).
    [
      "Display P3 photo JPEG 4032x3024",
      await raw(saturated(photoPixels(4032, 3024, 9)), 4032, 3024)
        .withIccProfile("p3")
        .jpeg({ quality: 92 })
        .toBuffer(),
    ],
    [
      "Display P3 screenshot PNG 2940x1912",
      await raw(screenshotPixels(2940, 1912, 10), 2940, 1912)
        .withIccProfile("p3")
        .png()
        .toBuffer(),
    ],
  ];
}

/** The UI-screenshot corpus (test/fixtures/ui-screenshots.ts) as screenshot tools write it: PNG, libpng's adaptive filters. */
export async function makeUiInputs(): Promise<Array<[string, Buffer]>> {
  const out: Array<[string, Buffer]> = [];
  for (const [name, spec] of UI_SCREENSHOTS) {
    out.push([
      `${name} PNG`,
      await sharp(Buffer.from(uiScreenshotPixels(spec)), {
        raw: { width: spec.width, height: spec.height, channels: 3 },
      })
        .png({ adaptiveFiltering: true })
        .toBuffer(),
    ]);
  }
  return out;
}

/** The four screen sizes agents send most, each in a light and a dark UI (issue #45's fit target). */
export const SCREENSHOT_SIZES: ReadonlyArray<readonly [number, number]> = [
  [1280, 800],
  [1440, 900],
  [1920, 1080],
  [2560, 1440],
];

/** Paints a vertical two-colour gradient into `rgb` (`width` wide) over the rectangle. */
function gradient(
  rgb: Uint8Array,
  width: number,
  [x0, y0, w, h]: readonly [number, number, number, number],
  from: readonly number[],
  to: readonly number[],
): void {
  for (let y = y0; y < y0 + h; y++) {
    const t = (y - y0) / Math.max(1, h - 1);
    for (let x = x0; x < x0 + w; x++) {
      const i = (y * width + x) * 3;
      for (let c = 0; c < 3; c++) rgb[i + c] = Math.round(from[c]! + (to[c]! - from[c]!) * t);
    }
  }
}

/** Copies a `w`x`h` photo (test/fixtures/images.ts photoPixels) into `rgb` at (x0, y0). */
function photoPanel(rgb: Uint8Array, width: number, x0: number, y0: number, w: number, h: number, seed: number): void {
  const photo = photoPixels(w, h, seed);
  for (let y = 0; y < h; y++) rgb.set(photo.subarray(y * w * 3, (y + 1) * w * 3), ((y0 + y) * width + x0) * 3);
}

/**
 * A typical screenshot an agent sends: the UI corpus's app layout (flat panels, a sidebar, buttons,
 * anti-aliased text; code on the dark theme) with a gradient banner and a photo panel in its
 * content area, as RGB bytes.
 */
export function typicalScreenshotPixels(width: number, height: number, theme: "light" | "dark"): Uint8Array {
  const rgb = uiScreenshotPixels({
    width,
    height,
    theme,
    scale: 1,
    layout: "app",
    seed: width + (theme === "dark" ? 1 : 0),
  });
  const right = width - 24;
  const bannerW = Math.round(width * 0.3),
    bannerH = Math.round(height * 0.12);
  const dark = theme === "dark";
  gradient(
    rgb,
    width,
    [right - bannerW, 76, bannerW, bannerH],
    dark ? [40, 44, 90] : [99, 102, 241],
    dark ? [20, 22, 30] : [236, 72, 153],
  );
  const photoW = Math.round(width * 0.3),
    photoH = Math.round(height * 0.4);
  photoPanel(rgb, width, right - photoW, height - photoH - 40, photoW, photoH, width);
  return rgb;
}

/**
 * The typical screenshots (SCREENSHOT_SIZES x light/dark) as computer-use agents send them: RGB PNG
 * with libpng's adaptive row filters, as screenshot tools write.
 */
export async function makeScreenshotInputs(): Promise<Array<[string, Buffer]>> {
  const out: Array<[string, Buffer]> = [];
  for (const [width, height] of SCREENSHOT_SIZES) {
    for (const theme of ["light", "dark"] as const) {
      out.push([
        `screenshot ${width}x${height} ${theme} PNG`,
        await sharp(Buffer.from(typicalScreenshotPixels(width, height, theme)), { raw: { width, height, channels: 3 } })
          .png({ adaptiveFiltering: true })
          .toBuffer(),
      ]);
    }
  }
  return out;
}
