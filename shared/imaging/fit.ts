/**
 * Fits an image into the vision embed budget (docs/vision.md, "The embed budget"): pass through what already fits, else
 * crop, flatten, scale straight to the long-edge cap and search the highest JPEG quality whose
 * `data:` URL fits, shrinking by the square root of the overshoot only when the lowest acceptable
 * quality still does not fit. Every codec instance lives for one call, so memory does not ratchet,
 * except our SIMD kernels' instance per role and the encoder's coefficient array, which the next
 * fit reuses (bounded, about 5 MB at 1568x882: SimdPool).
 */
import { AppError } from "../http/errors";
import type { FitOptions, FitResult, ImageMediaType, VisionWasm } from "../ports";
import { type ImageHeader, openImage } from "../media/image-header";
import { dataUrlLength, maxPayloadBytes } from "../media/data-url";
import { DEFAULT_FIT_SETTINGS, type FitSettings, type JpegEncoder } from "./jpeg.settings";
import { decodeJpegRgb } from "./codecs/jpeg/jpeg.decode";
import { FLAT_TABLES, prepareJpeg, type PreparedJpeg, YCC_444 } from "./jpeg.baseline";
import { subsamplingError } from "./jpeg.chroma";
import { encodePng, pngPredictedOver } from "./codecs/png/png.encode";
import { type RgbTransform, iccToSrgb } from "./color/icc";
import { StreamingResampler, resizeRgb, type SourceWindow } from "./resample";
import { SimdPool } from "./wasm/simd.instances";
import { codecFor } from "./codecs/codec.registry";
import type { CodecImage, DecodeDetail } from "./codecs/codec";

/**
 * Quality range searched: the whole range up to 100 (the budget is the user's knob: what it allows
 * is spent); below 30 blocks swamp text. Between QUALITY_MIN and QUALITY_COMPARED_BELOW a full-size
 * fit is compared (by measured PSNR) with a smaller image at QUALITY_COMFORT, and the more faithful
 * one is kept.
 */
const QUALITY_MAX = 100;
export const QUALITY_MIN = 30;
const QUALITY_COMFORT = 50;
/**
 * The comparison runs only below this quality: over 128 fits (the bench's 16 inputs at 24–256 KiB)
 * a full-size fit at 40–49 was compared 7 times and the smaller image never won (at best +0.19 dB,
 * under RESOLUTION_PREFERENCE_DB), while each comparison costs a second search and two decodes
 * (docs/vision-decisions.md, "Fewer comparisons").
 */
const QUALITY_COMPARED_BELOW = 40;
/**
 * A smaller image must measure this much more faithful to replace the full-size one: near a tie,
 * resolution (legible glyphs, exact coordinates) is worth more than a PSNR hair.
 */
const RESOLUTION_PREFERENCE_DB = 0.25;
/**
 * Where nothing fits at QUALITY_MIN at the cap size, the cap size at the highest quality down to this
 * that fits is compared (by measured PSNR at the cap size) with the image shrunk until QUALITY_MIN
 * fits, and kept unless the smaller image measures RESOLUTION_PREFERENCE_DB more faithful. A small
 * shrink of a UI screenshot resamples every glyph and edge: a 1280x800 dialog at 48 KiB at quality
 * 29 measures 32.7 dB against the exact Lanczos-3, shrunk until 30 fits 31.4 (enlarged back by the
 * same kernel; docs/vision-decisions.md, "Under quality 30 at the cap size" and "The enlargement in the
 * yardstick"). Lower, the cap size stops winning: the 5K screenshot at 64 KiB fits there only at
 * about 11-14, 0.6 dB less faithful than shrinking.
 */
const QUALITY_FLOOR = 20;
/**
 * Where the sampled size estimate of 4:2:0 at quality 100 is over this times the budget, its exact
 * size (a count pass, about 6 ms at 1568x882) is not measured before the search. The estimate is
 * 0.55–1.33x the exact size on the bench's screenshots and 1.00–1.02x on photos; a wider margin
 * measured the size of four photos at 1 MiB in vain (docs/vision-decisions.md, "4:4:4 where 4:2:0 stops
 * at quality 100"). A screenshot the estimate overstates is not missed: its search reaches 100, and
 * 4:4:4 is tried then.
 */
const FULL_QUALITY_SLACK = 1.2;
/**
 * Budget bytes per pixel of the output size rendered (the cap size first) from which the source is
 * decoded without a detail-losing shrink (a JPEG's n/8 inverse DCT): at 1 MiB a 1568x882 fit gets
 * 0.76 and comes out near-lossless, where the DCT-scaled decode had cost a JPEG screenshot 19 dB.
 * The n/8 decode's ringing on text edges costs that screenshot 3.2 dB at 0.14 (256 KiB at
 * 1568x882), 1.1 at 0.11, 0.7 at 0.089, 0.4 at 0.071 and nothing at 0.053; photos gain under 0.08
 * dB from the full decode, for up to 45 % more CPU on a 12 MP photo and about 10 % on a 6 MP one
 * (docs/vision-decisions.md, "The full-size decode from 0.06 bytes a pixel").
 */
export const FULL_DETAIL_BYTES_PER_PIXEL = 0.06;
/**
 * Budget bytes per pixel of the output size rendered under which the output's quantiser drops what
 * the DCT-scaled decode's margin keeps, so a JPEG is decoded at the smallest n/8 scale not under the
 * target (DecodeDetail "coarse"). On the bench's seven JPEGs that cost at most 0.02 dB at full size
 * at 0.024-0.035 bytes a pixel (64 KiB) for 10-30 % less CPU per fit; at 0.045-0.06 up to 0.06 dB,
 * at 0.12 up to 0.39 dB (docs/vision-decisions.md, "The DCT-scaled decode at low budgets").
 */
export const COARSE_DETAIL_BYTES_PER_PIXEL = 0.04;

/** How much detail a decode must keep for an output of `bytesPerPixel` budget bytes a pixel (DecodeDetail). */
export function decodeDetail(bytesPerPixel: number): DecodeDetail {
  if (bytesPerPixel >= FULL_DETAIL_BYTES_PER_PIXEL) return "full";
  return bytesPerPixel < COARSE_DETAIL_BYTES_PER_PIXEL ? "coarse" : "margin";
}
/**
 * A lossless source's PNG is not encoded where a sample of its rows (an eighth, in 16-row bands:
 * pngPredictedOver) predicts it over this times its limit. On the bench's 17 PNG sources at the cap
 * size the sample's prediction was 0.62-1.32x the exact size, so a PNG that fits is never skipped;
 * a typical screenshot with a photo or gradient panel (1.5-4.6x the limit at 256 KiB) no longer
 * pays for the part of a PNG encode it took to find out (docs/benchmarks.md, "The typical
 * screenshots").
 */
export const PNG_SLACK = 1.5;
/**
 * Whether the source's own deflated image data (CodecImage.deflatedBytes), scaled to the pixels of
 * the fitted size, puts the fit's PNG over PNG_SLACK times `limit` without deflating a row: then
 * neither the sampled prediction nor the encode runs. Only for the whole image (a crop may be
 * its flattest part). Resampling adds colours to every edge and glyph, so the fit's PNG at the cap
 * size was 1.0x (not scaled) to 27x the source's bytes scaled on the bench's PNGs, and never under
 * 0.74x where the source was written with other row filters or levels 2-9 (sharp with no filters:
 * 0.75x): over PNG_SLACK by the source's bytes is over the limit by the PNG's own. The typical
 * screenshots' sources (287-612 KB a 1.0-2.0 MP cap render) rule out a PNG at their JPEG's size
 * (194 KB at 256 KiB), the sample's 2-6 ms spared; the computer-use session's (89 KB) does not
 * (docs/vision-decisions.md, "The PNG the source's bytes rule out").
 */
export function pngOverBySource(
  deflatedBytes: number | undefined,
  source: { width: number; height: number },
  window: { width: number; height: number },
  size: { width: number; height: number },
  limit: number,
): boolean {
  if (deflatedBytes === undefined || window.width !== source.width || window.height !== source.height) return false;
  return (deflatedBytes * size.width * size.height) / (source.width * source.height) >= PNG_SLACK * limit;
}
/**
 * Secant steps of a search's guess before it bisects. Through the last two estimates, not the
 * bracket's ends: ln(size) bends upward towards quality 100, so a line to the far end undershoots
 * step after step; through the last two it lands within a quality or two of the crossing: a fit
 * of the typical or the session's screenshots took 5-10 estimates instead of 5-16, for the same
 * guesses (docs/vision-decisions.md, "Fewer estimates").
 */
const SECANT_STEPS = 6;
/** A fit that uses this share of the budget is accepted without searching the last quality points. */
const GOOD_ENOUGH_SHARE = 0.93;

function formatFactor(value: number): string {
  return value.toFixed(2).replace(/\.?0+$/, "");
}

interface Crop {
  x: number;
  y: number;
  width: number;
  height: number;
}

function clampRegion(region: [number, number, number, number], width: number, height: number): Crop {
  if (region.length !== 4 || region.some((v) => typeof v !== "number" || !Number.isFinite(v))) {
    throw new AppError(
      400,
      "invalid_request",
      `region must be four numbers [x1, y1, x2, y2] in pixels of the ${width}x${height} image.`,
    );
  }
  const [x1, y1, x2, y2] = region;
  const left = Math.max(0, Math.min(width, Math.floor(x1)));
  const top = Math.max(0, Math.min(height, Math.floor(y1)));
  const right = Math.max(0, Math.min(width, Math.ceil(x2)));
  const bottom = Math.max(0, Math.min(height, Math.ceil(y2)));
  if (right <= left || bottom <= top) {
    throw new AppError(
      400,
      "invalid_request",
      `region [${region.join(", ")}] has zero area inside the ${width}x${height} image; give [x1, y1, x2, y2] with 0 <= x1 < x2 <= ${width} and 0 <= y1 < y2 <= ${height}.`,
    );
  }
  return { x: left, y: top, width: right - left, height: bottom - top };
}

function describe(
  original: { width: number; height: number },
  crop: Crop | undefined,
  width: number,
  height: number,
): string {
  const factorX = (crop?.width ?? original.width) / width;
  const factorY = (crop?.height ?? original.height) / height;
  const factor =
    Math.abs(factorX - factorY) < 0.01
      ? `multiply coordinates by ${formatFactor(factorX)}`
      : `multiply x by ${formatFactor(factorX)} and y by ${formatFactor(factorY)}`;
  const scaled = width !== (crop?.width ?? original.width) || height !== (crop?.height ?? original.height);
  if (!crop)
    return `Image downscaled from ${original.width}x${original.height} to ${width}x${height} for vision; ${factor}.`;
  const region = `[${crop.x},${crop.y},${crop.x + crop.width},${crop.y + crop.height}]`;
  if (!scaled)
    return `Cropped to region ${region} of the ${original.width}x${original.height} original (${width}x${height}, not scaled); add (${crop.x}, ${crop.y}) to map coordinates back.`;
  return `Cropped to region ${region} of the ${original.width}x${original.height} original and downscaled to ${width}x${height}; ${factor}, then add (${crop.x}, ${crop.y}).`;
}

/** A displayed-pixel rectangle as the rectangle of stored pixels that shows there (EXIF 1..8). */
function toStored(r: Crop, orientation: number, storedWidth: number, storedHeight: number): Crop {
  const W = storedWidth,
    H = storedHeight;
  switch (orientation) {
    case 2:
      return { x: W - r.x - r.width, y: r.y, width: r.width, height: r.height };
    case 3:
      return { x: W - r.x - r.width, y: H - r.y - r.height, width: r.width, height: r.height };
    case 4:
      return { x: r.x, y: H - r.y - r.height, width: r.width, height: r.height };
    case 5:
      return { x: r.y, y: r.x, width: r.height, height: r.width };
    case 6:
      return { x: r.y, y: H - r.x - r.width, width: r.height, height: r.width };
    case 7:
      return { x: W - r.y - r.height, y: H - r.x - r.width, width: r.height, height: r.width };
    case 8:
      return { x: W - r.y - r.height, y: r.x, width: r.height, height: r.width };
    default:
      return r;
  }
}

/** Turns a stored-orientation RGB image (`width`x`height`) into its displayed orientation. */
function orient(rgb: Uint8Array, width: number, height: number, orientation: number): Uint8Array {
  if (orientation <= 1 || orientation > 8) return rgb;
  const turned = orientation >= 5;
  const dw = turned ? height : width,
    dh = turned ? width : height;
  const out = new Uint8Array(rgb.length);
  for (let dy = 0; dy < dh; dy++) {
    for (let dx = 0; dx < dw; dx++) {
      let sx: number, sy: number;
      switch (orientation) {
        case 2:
          sx = width - 1 - dx;
          sy = dy;
          break;
        case 3:
          sx = width - 1 - dx;
          sy = height - 1 - dy;
          break;
        case 4:
          sx = dx;
          sy = height - 1 - dy;
          break;
        case 5:
          sx = dy;
          sy = dx;
          break;
        case 6:
          sx = dy;
          sy = height - 1 - dx;
          break;
        case 7:
          sx = width - 1 - dy;
          sy = height - 1 - dx;
          break;
        default:
          sx = width - 1 - dy;
          sy = dx;
          break; // 8
      }
      const s = (sy * width + sx) * 3,
        o = (dy * dw + dx) * 3;
      out[o] = rgb[s]!;
      out[o + 1] = rgb[s + 1]!;
      out[o + 2] = rgb[s + 2]!;
    }
  }
  return out;
}

function toRgba(rgb: Uint8Array): Uint8Array {
  const rgba = new Uint8Array((rgb.length / 3) * 4);
  for (let i = 0, o = 0; i < rgb.length; i += 3, o += 4) {
    rgba[o] = rgb[i]!;
    rgba[o + 1] = rgb[i + 1]!;
    rgba[o + 2] = rgb[i + 2]!;
    rgba[o + 3] = 255;
  }
  return rgba;
}

/** Output size for a window: long edge at most `maxLongEdge`, never upscaled. */
function targetSize(width: number, height: number, maxLongEdge: number): { width: number; height: number } {
  const scale = Math.min(1, maxLongEdge / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

interface SearchOutcome {
  data?: Uint8Array;
  quality?: number;
  /**
   * No smaller image is worth a look: the quality is at least QUALITY_COMPARED_BELOW, or the output
   * is at least as faithful as Annex K tables at QUALITY_COMFORT would be.
   */
  comfortable?: boolean;
  /** Size at QUALITY_MIN when even that did not fit. */
  sizeAtMin?: number;
  /** Where even QUALITY_MIN did not fit: the highest quality in [QUALITY_FLOOR, QUALITY_MIN) that does, at the same size. */
  below?: () => SearchOutcome;
}

/**
 * Highest quality in [QUALITY_MIN, QUALITY_MAX] whose encode fits `maxBytes`. Sizes are modelled as
 * log-linear in quality and each guess is interpolated from the last two encodes, so a search
 * usually ends after two or three encodes instead of a bisection's five or six.
 */
export function searchQuality(
  encode: (q: number) => Uint8Array,
  maxBytes: number,
  firstGuess: number,
  counter: { attempts: number },
): SearchOutcome {
  const tried = new Map<number, number>();
  let bestFit: { q: number; data: Uint8Array } | undefined;
  let lowestFail = QUALITY_MAX + 1;
  let q = Math.max(QUALITY_MIN, Math.min(QUALITY_MAX, Math.round(firstGuess)));
  const aim = Math.log(maxBytes * 0.97);
  for (;;) {
    const data = encode(q);
    counter.attempts++;
    tried.set(q, data.length);
    if (data.length <= maxBytes) {
      if (!bestFit || q > bestFit.q) bestFit = { q, data };
    } else {
      lowestFail = Math.min(lowestFail, q);
    }
    if (
      bestFit &&
      (bestFit.q === QUALITY_MAX || lowestFail - bestFit.q <= 1 || bestFit.data.length >= maxBytes * GOOD_ENOUGH_SHARE)
    )
      break;
    if (!bestFit && q === QUALITY_MIN) return { sizeAtMin: data.length };
    // Interpolate ln(size) over quality through the two nearest points; one point: typical slope.
    const points = [...tried.entries()].sort((a, b) => Math.abs(a[0] - q) - Math.abs(b[0] - q)).slice(0, 2);
    let slope = 0.035;
    if (points.length === 2) {
      const [[qa, sa], [qb, sb]] = points as [[number, number], [number, number]];
      const measured = (Math.log(sa) - Math.log(sb)) / (qa - qb);
      if (Number.isFinite(measured) && measured > 0.005) slope = measured;
    }
    let next = Math.floor(q + (aim - Math.log(data.length)) / slope);
    const low = bestFit ? bestFit.q + 1 : QUALITY_MIN;
    const high = lowestFail - 1;
    next = Math.max(low, Math.min(high, next));
    if (tried.has(next)) {
      // The model stalled on a tried point: bisect the open interval instead.
      next = Math.floor((low + high) / 2);
      if (tried.has(next)) break;
    }
    q = next;
  }
  return bestFit ? { data: bestFit.data, quality: bestFit.q } : {};
}

/**
 * Fits `bytes` into the embed budget; see docs/vision.md ("The embed budget") for the rules.
 * @throws AppError 413 over `maxInputPixels` (before any decode), 415 for unsupported formats, 400 for
 * corrupt data or a zero-area region.
 * @example
 * const fitted = await fitImage(bytes, { embedTargetBytes: 262144, maxLongEdge: 1568, maxInputPixels: 16_777_216 }, wasm);
 * const url = `data:${fitted.mediaType};base64,${toBase64(fitted.data)}`;
 */
export async function fitImage(
  bytes: Uint8Array,
  opts: FitOptions,
  wasm: VisionWasm,
  settings: FitSettings = DEFAULT_FIT_SETTINGS,
): Promise<FitResult> {
  const { header, jpeg } = openImage(bytes);
  const { mediaType, orientation } = header;
  const codec = codecFor(header);
  const turned = orientation >= 5;
  // Everything the caller sees (size, region, note) is in displayed pixels; the decoders work on
  // the stored ones, and the orientation is applied to the small, fitted image.
  const width = turned ? header.height : header.width;
  const height = turned ? header.width : header.height;
  const original = { mediaType, width, height, bytes: bytes.length };
  if (width * height > opts.maxInputPixels) {
    throw new AppError(
      413,
      "image_too_large",
      `The image is ${width}x${height} (${((width * height) / 1e6).toFixed(1)} MP), over this service's limit of ${(opts.maxInputPixels / 1e6).toFixed(1)} MP. Downscale or crop it before sending (a region does not help: the whole image must be decoded).`,
    );
  }
  const clamped = opts.region ? clampRegion(opts.region, width, height) : undefined;
  // A region that covers the whole image (e.g. [0, 0, 5000, 5000] clamped) is no region: it may pass through.
  const crop = clamped && (clamped.width < width || clamped.height < height) ? clamped : undefined;
  const originalUrlBytes = dataUrlLength(mediaType, bytes.length);
  // The structure is walked once (a PNG's chunks and CRCs; a JPEG's markers, resumed from the
  // header's walk to EOI); the verification, every decode and the colour profile read what it found.
  const image = codec.open({ bytes, header, jpeg }, wasm);
  if (
    !crop &&
    image.passThrough &&
    orientation === 1 &&
    originalUrlBytes <= opts.embedTargetBytes &&
    Math.max(width, height) <= opts.maxLongEdge
  ) {
    // Embedded unchanged, the bytes reach the provider with no decoder of ours in between.
    await image.verify();
    return {
      mediaType,
      data: bytes,
      width,
      height,
      dataUrlBytes: originalUrlBytes,
      original,
      note: `Image passed through unchanged (${width}x${height}); coordinates are in original pixels.`,
      encodeAttempts: 0,
      decodes: 0,
      passedThrough: true,
      scale: 1,
      wasmPeakBytes: 0,
    };
  }

  const window: Crop = crop ?? { x: 0, y: 0, width, height };
  const toSrgb = iccToSrgb(await image.colorProfile());
  // Another encoder handed in (the bench's MozJPEG) searches in place of ours, one instance per fit.
  const other = settings.jpegEncoder && (await settings.jpegEncoder());
  // The fit's resamplers and encodes share instances (a later one reuses the pages an earlier one
  // touched), and its encodes one coefficient array, which the release keeps for the next fit.
  const simd = wasm.simd && new SimdPool(wasm.simd);
  try {
    return await chooseFit({
      opts,
      wasm,
      simd,
      header,
      image,
      lossless: codec.lossless,
      turned,
      original,
      crop,
      window,
      target: targetSize(window.width, window.height, opts.maxLongEdge),
      storedWindow: toStored(window, orientation, header.width, header.height),
      toSrgb,
      maxBytes: maxPayloadBytes(OUT_TYPE, opts.embedTargetBytes),
      other,
      state: { attempts: 0, decodes: 0, wasmPeakBytes: 0, usedSimd: false },
    });
  } finally {
    simd?.release();
  }
}

/** The fit's output type unless a lossless source goes out as a PNG. */
const OUT_TYPE = "image/jpeg";

type Size = { width: number; height: number };

/** What one fit counts across its renders and searches, for its result. */
interface FitState {
  /** Encodes counted (a whole-image size or an encode). */
  attempts: number;
  decodes: number;
  /** Largest WASM memory of any codec instance of the fit. */
  wasmPeakBytes: number;
  usedSimd: boolean;
  /** The tables and chroma the JPEG as chosen now uses; a losing candidate puts them back. */
  jpegTables?: string;
  chroma?: FitResult["chroma"];
}

/** A fit past the pass-through: the open source, where it is cut and turned, and the budget. */
interface FitJob {
  readonly opts: FitOptions;
  readonly wasm: VisionWasm;
  readonly simd: SimdPool | undefined;
  readonly header: ImageHeader;
  readonly image: CodecImage;
  readonly lossless: boolean;
  readonly turned: boolean;
  readonly original: FitResult["original"];
  readonly crop: Crop | undefined;
  /** The displayed window fitted (the crop, or the whole image). */
  readonly window: Crop;
  /** The window at the long-edge cap: the first size tried. */
  readonly target: Size;
  readonly storedWindow: Crop;
  readonly toSrgb: RgbTransform | undefined;
  /** Largest JPEG payload whose data: URL fits the budget. */
  readonly maxBytes: number;
  readonly other: JpegEncoder | undefined;
  readonly state: FitState;
}

/**
 * Decodes the source and resamples its window straight to `size` (displayed pixels), converted to
 * sRGB. The search's own smaller sizes are resampled from the cap-size render instead: a second
 * decode cost 6–40 % of the fit for ±0.04 dB (docs/vision-decisions.md, "Shrinking from the cap-size
 * render"); only a smaller candidate that wins the fidelity comparison is rendered from here.
 */
async function render(job: FitJob, size: Size): Promise<Uint8Array> {
  const { header, storedWindow, state } = job;
  const orientation = header.orientation;
  const stored = job.turned ? { width: size.height, height: size.width } : size;
  // What the budget lets an output of this size keep, so what the decode must (CodecImage.decodeRows).
  const detail = decodeDetail(job.maxBytes / (size.width * size.height));
  state.decodes++;
  let simdBytes = 0;
  const makeResampler = (decodedWidth: number, decodedHeight: number, scale?: number) => {
    const sx = scale ?? decodedWidth / header.width;
    const sy = scale ?? decodedHeight / header.height;
    const mapped: SourceWindow = {
      x: storedWindow.x * sx,
      y: storedWindow.y * sy,
      width: storedWindow.width * sx,
      height: storedWindow.height * sy,
    };
    const resampler = new StreamingResampler(
      decodedWidth,
      decodedHeight,
      mapped,
      stored.width,
      stored.height,
      job.simd,
    );
    simdBytes = resampler.wasmBytes;
    state.usedSimd = resampler.usesSimd;
    return resampler;
  };
  const minScale = Math.max(stored.width / storedWindow.width, stored.height / storedWindow.height);
  const decoded = await job.image.decodeRows(minScale, makeResampler, detail, job.simd);
  const rgb = orient(decoded.resampler.finish(), stored.width, stored.height, orientation);
  // Codec instances run one after another, so the call's peak is the largest single one.
  state.wasmPeakBytes = Math.max(state.wasmPeakBytes, decoded.wasmBytes, simdBytes);
  job.toSrgb?.(rgb);
  return rgb;
}

/**
 * Where 4:2:0 fits at quality 100 with budget left, its 2x2-averaged chroma, not the quantiser,
 * limits the image (coloured text and UI edges lose the most). Then 4:4:4 at the highest quality
 * that fits is kept when it adds less squared error than 4:2:0 at 100 does with its subsampling,
 * both estimated on a sample (docs/vision.md, "Chroma sampling"); else 4:2:0 at 100 goes out.
 * Undefined (no encode counted) where the sampled size of 4:2:0 at 100 is over FULL_QUALITY_SLACK
 * times the budget, or (one counted) where its exact size, or its encode, is over the budget;
 * `at100`, 4:2:0 at 100 as the search already wrote it within the budget, skips those checks and
 * is what goes out if 4:4:4 loses.
 * 4:4:4 gets the flat table without a choice: at the qualities these budgets reach it adds the
 * least error (docs/vision-decisions.md, "4:4:4 where 4:2:0 stops at quality 100"). Its kernels take a
 * fresh instance, so `subsampled` stays live when 4:4:4 loses.
 */
function atFullQuality(
  job: FitJob,
  rgb: Uint8Array,
  size: Size,
  subsampled: PreparedJpeg,
  at100?: Uint8Array,
): SearchOutcome | undefined {
  const { maxBytes, state } = job;
  if (!at100) {
    if (estimateOf(subsampled, QUALITY_MAX) > maxBytes * FULL_QUALITY_SLACK) return undefined;
    state.attempts++;
    if (subsampled.sizeAt(QUALITY_MAX) > maxBytes) return undefined;
  }
  const error = subsampled.errorAt(QUALITY_MAX) + subsamplingError(rgb, size.width, size.height);
  const prepared = prepareJpeg(rgb, size.width, size.height, job.simd?.module, FLAT_TABLES, YCC_444);
  state.wasmPeakBytes = Math.max(state.wasmPeakBytes, prepared.wasmBytes);
  const outcome = searchPrepared(prepared, maxBytes, state);
  if (outcome.quality !== undefined && prepared.errorAt(outcome.quality) < error) {
    state.jpegTables = prepared.tables;
    state.chroma = "4:4:4";
    return outcome;
  }
  // The stuffing allowance makes sizeAt an upper bound; in the rare exception the search takes over.
  const data = at100 ?? subsampled.encode(QUALITY_MAX);
  return data.length <= maxBytes ? { data, quality: QUALITY_MAX } : undefined;
}

/**
 * The highest quality that fits at `size`, and the size any other quality would take.
 * `known`: the quality a near-identical image fitted at, tried first (the baseline encoder's search).
 */
function search(
  job: FitJob,
  rgb: Uint8Array,
  size: Size,
  firstGuess: number,
  known?: number,
): SearchOutcome & { sizeAt: (q: number) => number } {
  const { maxBytes, state, other } = job;
  if (other) {
    const rgba = toRgba(rgb);
    const encode = (q: number) => other.encode(rgba, size.width, size.height, q);
    const outcome = searchQuality(encode, maxBytes, firstGuess, state);
    state.wasmPeakBytes = Math.max(state.wasmPeakBytes, other.wasmBytes());
    return {
      ...outcome,
      sizeAt: (q) => {
        state.attempts++;
        return encode(q).length;
      },
    };
  }
  const prepared = prepareJpeg(rgb, size.width, size.height, job.simd);
  state.wasmPeakBytes = Math.max(state.wasmPeakBytes, prepared.wasmBytes);
  state.jpegTables = prepared.chooseTables(maxBytes, QUALITY_MIN, QUALITY_MAX);
  state.chroma = "4:2:0";
  // Comfortable: 4:4:4 fits where 4:2:0 at 100 does, far above QUALITY_COMPARED_BELOW (90-100 on
  // the bench's screenshots), so the comparison below never asks it for another size.
  const full = atFullQuality(job, rgb, size, prepared);
  if (full) return { ...full, comfortable: true, sizeAt: () => maxBytes };
  const outcome = searchPrepared(prepared, maxBytes, state, known);
  if (outcome.quality === QUALITY_MAX && outcome.data) {
    // Only where the estimate had put 4:2:0 at 100 over the slack: the search found it within.
    const late = atFullQuality(job, rgb, size, prepared, outcome.data);
    if (late) return { ...late, comfortable: true, sizeAt: () => maxBytes };
  }
  // Qualities of other tables are on other scales: compare by the error they add.
  const comfortable =
    outcome.quality !== undefined &&
    (outcome.quality >= QUALITY_COMPARED_BELOW ||
      (state.jpegTables !== "annex-k" &&
        prepared.errorAt(outcome.quality) <= prepared.errorAt(QUALITY_COMFORT, "annex-k")));
  return {
    ...outcome,
    comfortable,
    sizeAt: (q) => {
      state.attempts++;
      return prepared.sizeAt(q);
    },
    ...(outcome.data
      ? {}
      : { below: () => searchPrepared(prepared, maxBytes, state, undefined, QUALITY_FLOOR, QUALITY_MIN - 1) }),
  };
}

/** The fit's answer: `data` at `size`, with what the fit counted on the way. */
function fitResult(
  job: FitJob,
  data: Uint8Array,
  quality: number | undefined,
  size: Size,
  type: ImageMediaType = OUT_TYPE,
): FitResult {
  const { state } = job;
  return {
    mediaType: type,
    data,
    width: size.width,
    height: size.height,
    dataUrlBytes: dataUrlLength(type, data.length),
    original: job.original,
    note: describe(job.original, job.crop, size.width, size.height),
    encodeAttempts: state.attempts,
    decodes: state.decodes,
    passedThrough: false,
    scale: size.width / job.window.width,
    crop: job.crop,
    wasmPeakBytes: state.wasmPeakBytes,
    quality,
    jpegTables: type === OUT_TYPE ? state.jpegTables : undefined,
    chroma: type === OUT_TYPE && !job.other ? state.chroma : undefined,
    simd: state.usedSimd,
  };
}

/** The size at which bytes now `bytesNow` should fit: sides shrunk by the square root of the overshoot. */
function shrunk(size: Size, bytesNow: number, maxBytes: number): Size {
  // Bytes scale roughly with pixel count, so the side shrinks by the square root of the overshoot.
  const shrink = Math.min(0.97, Math.sqrt(maxBytes / bytesNow) * 0.97);
  return {
    width: Math.max(1, Math.floor(size.width * shrink)),
    height: Math.max(1, Math.floor(size.height * shrink)),
  };
}

/**
 * Renders the cap size, then searches it and, where it does not fit comfortably, smaller sizes
 * and lower qualities, comparing their fidelity; a lossless source may go out as a PNG.
 */
async function chooseFit(job: FitJob): Promise<FitResult> {
  const { opts, wasm, simd, target, maxBytes, state } = job;
  let size = target;
  const full = await render(job, size);
  let rgb = full;
  /**
   * A lossless source (`codec.lossless`: PNG, GIF, screenshots) goes out as a PNG of the full fitted image when that
   * fits the budget and is no larger than the JPEG, or when the JPEG had to be smaller than the
   * long-edge cap allows: exact text at full size beats a smaller lossy picture of it.
   */
  const pngRoom = maxPayloadBytes("image/png", opts.embedTargetBytes);
  let pngOverBudget = false;
  /**
   * The PNG of the full fitted image if it is at most `limit` bytes (counted as an encode), unless
   * the source's bytes (pngOverBySource) or a sample of its rows predict it over PNG_SLACK times
   * the limit (neither counted).
   */
  const pngWithin = async (limit: number): Promise<FitResult | undefined> => {
    let png: Uint8Array | undefined;
    const bySource = pngOverBySource(job.image.deflatedBytes, job.original, job.window, target, limit);
    if (!bySource && !pngPredictedOver(full, target.width, target.height, limit, PNG_SLACK, wasm.zlib)) {
      state.attempts++;
      png = encodePng(full, target.width, target.height, limit, wasm.zlib);
    }
    if (!png && limit === pngRoom) pngOverBudget = true;
    return png && fitResult(job, png, undefined, target, "image/png");
  };
  const withLossless = async (jpeg: FitResult): Promise<FitResult> => {
    if (!job.lossless || pngOverBudget) return jpeg;
    const shrunk = jpeg.width !== target.width || jpeg.height !== target.height;
    const png = await pngWithin(shrunk ? pngRoom : Math.min(pngRoom, jpeg.data.length));
    // A PNG encoded and over its limit was an attempt too.
    return png ?? { ...jpeg, encodeAttempts: state.attempts };
  };
  /** The fit's tables and chroma as chosen now; the function puts them back after a losing candidate. */
  const keepChoice = () => {
    const kept = { jpegTables: state.jpegTables, chroma: state.chroma };
    return () => {
      state.jpegTables = kept.jpegTables;
      state.chroma = kept.chroma;
    };
  };
  /** A smaller candidate: `small` resampled from the `at`-size render (no second decode), searched from QUALITY_COMFORT. */
  const searchSmaller = (at: Size, small: Size) =>
    search(job, resizeRgb(full, at.width, at.height, small.width, small.height, simd), small, QUALITY_COMFORT);
  /** Whether `small` shows the `at`-size render RESOLUTION_PREFERENCE_DB more faithfully than `data` does. */
  const smallerWins = (small: Uint8Array, data: Uint8Array, at: Size) =>
    fidelity(small, full, at, wasm) > fidelity(data, full, at, wasm) + RESOLUTION_PREFERENCE_DB;
  for (let round = 0; ; round++) {
    const outcome = search(job, rgb, size, round === 0 ? 80 : QUALITY_COMFORT);
    if (outcome.data && outcome.quality !== undefined) {
      if (outcome.comfortable !== false || round > 0)
        return withLossless(fitResult(job, outcome.data, outcome.quality, size));
      const restore = keepChoice();
      // Below the comfortable quality: measure whether a smaller image at that quality would show
      // the full-size picture more faithfully; only if it wins is it rendered again from the source.
      const smallSize = shrunk(size, outcome.sizeAt(QUALITY_COMFORT), maxBytes);
      const small = searchSmaller(size, smallSize);
      if (
        small.data &&
        small.quality !== undefined &&
        small.quality > outcome.quality &&
        smallerWins(small.data, outcome.data, size)
      ) {
        const fromSource = search(job, await render(job, smallSize), smallSize, small.quality, small.quality);
        if (fromSource.data && fromSource.quality !== undefined)
          return withLossless(fitResult(job, fromSource.data, fromSource.quality, smallSize));
      }
      restore();
      return withLossless(fitResult(job, outcome.data, outcome.quality, size));
    }
    if (round === 0 && job.lossless) {
      // No JPEG fits at the cap: a PNG that does needs no second decode.
      const png = await pngWithin(pngRoom);
      if (png) return png;
    }
    // The size at which QUALITY_MIN should fit.
    const smaller = shrunk(size, outcome.sizeAtMin ?? maxBytes * 2, maxBytes);
    const low = round === 0 ? outcome.below?.() : undefined;
    if (low?.data && low.quality !== undefined) {
      // The cap size under QUALITY_MIN against the image shrunk until QUALITY_MIN fits (QUALITY_FLOOR).
      const restore = keepChoice();
      const small = searchSmaller(size, smaller);
      if (small.data && small.quality !== undefined && smallerWins(small.data, low.data, size))
        return withLossless(fitResult(job, small.data, small.quality, smaller));
      restore();
      return withLossless(fitResult(job, low.data, low.quality, size));
    }
    if ((size.width === 1 && size.height === 1) || round > 8) {
      throw new AppError(
        400,
        "invalid_request",
        `The image cannot be fitted into ${opts.embedTargetBytes} bytes; raise vision.embed_target_bytes.`,
      );
    }
    size = smaller;
    // From the cap-size render, not the source: no second decode (see `render`).
    rgb = resizeRgb(full, target.width, target.height, size.width, size.height, simd);
  }
}

/**
 * PSNR (dB, RGB) of an encoded JPEG against the `reference` it should show at `size`; a smaller
 * encode is scaled back up first, which is how its lost detail shows.
 */
function fidelity(
  jpeg: Uint8Array,
  reference: Uint8Array,
  size: { width: number; height: number },
  wasm: VisionWasm,
): number {
  const decoded = decodeJpegRgb(jpeg, wasm.jpegDecoder);
  const shown =
    decoded.width === size.width && decoded.height === size.height
      ? decoded.rgb
      : resizeRgb(decoded.rgb, decoded.width, decoded.height, size.width, size.height, wasm.simd);
  let se = 0;
  for (let i = 0; i < reference.length; i++) {
    const d = reference[i]! - shown[i]!;
    se += d * d;
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * reference.length) / se);
}

/**
 * PreparedJpeg.estimateAt of each prepared image by its tables and quality: the check of 4:2:0 at
 * quality 100 and each search's guesses ask for the same qualities (100 first), and every estimate
 * is a quantise-and-count pass over 1/16 of the blocks.
 */
const estimates = new WeakMap<PreparedJpeg, Map<string, number>>();
function estimateOf(prepared: PreparedJpeg, quality: number): number {
  let known = estimates.get(prepared);
  if (!known) estimates.set(prepared, (known = new Map()));
  const key = `${prepared.tables}:${quality}`;
  let v = known.get(key);
  if (v === undefined) known.set(key, (v = prepared.estimateAt(quality)));
  return v;
}

/**
 * Highest quality in [QUALITY_MIN, QUALITY_MAX] whose encode fits, on an image whose DCT is already
 * done. Guesses come from a 1/16 sample of the blocks, in runs of consecutive MCUs (cheap, not
 * counted as an encode; PreparedJpeg.estimateAt), rescaled by how far the last measured size was
 * from its estimate; each counted attempt quantises and entropy-sizes the whole image, and only the
 * winner is written.
 */
function searchPrepared(
  prepared: PreparedJpeg,
  maxBytes: number,
  counter: { attempts: number },
  known?: number,
  lowest = QUALITY_MIN,
  highest = QUALITY_MAX,
): SearchOutcome {
  const estimateAt = (q: number) => estimateOf(prepared, q);
  const sizes = new Map<number, number>();
  let correction = 1;
  const predicted = (q: number) => estimateAt(q) * correction;
  /**
   * Highest quality in [low, high] predicted to fit (sizes grow with quality), else `low`: the
   * quality a bisection would find, from fewer estimates. ln(size) is close to linear in quality,
   * so each step tries where the line through the last two qualities estimated crosses the budget
   * (a secant step, clamped inside the bracket); after SECANT_STEPS, the middle, so a curved
   * stretch cannot stall it. `probe`, a quality inside the bracket, is estimated first and narrows
   * it: the same answer where the estimates grow with quality, from fewer of them where it is near.
   */
  const guess = (low: number, high: number, probe?: number) => {
    if (predicted(high) <= maxBytes) return high;
    if (probe !== undefined && probe > low && probe < high) {
      if (predicted(probe) <= maxBytes) low = probe;
      else high = probe;
    }
    if (predicted(low) > maxBytes) return low;
    const aim = Math.log(maxBytes);
    // The line goes through the last two qualities estimated (the bracket's ends at first).
    let a = low,
      b = high;
    for (let step = 0; high - low > 1; step++) {
      const atA = Math.log(predicted(a)),
        atB = Math.log(predicted(b));
      const secant = a + Math.floor(((aim - atA) / (atB - atA)) * (b - a));
      const next = Math.min(
        high - 1,
        Math.max(low + 1, step < SECANT_STEPS && Number.isFinite(secant) ? secant : (low + high) >> 1),
      );
      if (predicted(next) <= maxBytes) low = next;
      else high = next;
      a = b;
      b = next;
    }
    return low;
  };
  let low = lowest,
    high = highest;
  let fits: number | undefined;
  let hint = known === undefined ? undefined : Math.max(low, Math.min(high, known));
  // Where the table choice's sample put the budget: the first guess looks there first ("Fewer estimates").
  let probe = prepared.budgetQuality === undefined ? undefined : Math.round(prepared.budgetQuality);
  while (low <= high) {
    const q = hint ?? guess(low, high, probe);
    hint = undefined;
    probe = undefined;
    counter.attempts++;
    const size = prepared.sizeAt(q);
    sizes.set(q, size);
    correction = size / estimateAt(q);
    if (size <= maxBytes) {
      fits = q;
      low = q + 1;
      // The next quality up is predicted (with this correction) not to fit: stop here.
      if (low > high || predicted(low) > maxBytes * 1.01) break;
    } else {
      high = q - 1;
    }
  }
  if (fits === undefined) return { sizeAtMin: sizes.get(lowest) };
  // The stuffing allowance makes sizeAt an upper bound; the loop guards the rare exception.
  for (let quality = fits; quality >= lowest; quality--) {
    const data = prepared.encode(quality);
    if (data.length <= maxBytes) return { data, quality };
  }
  return { sizeAtMin: sizes.get(lowest) ?? maxBytes * 2 };
}

/**
 * Binds the codecs once (at the runtime's composition root) and gives the `fitImage(bytes, opts)`
 * the route calls.
 */
export function createImageFitter(
  wasm: VisionWasm,
  settings: FitSettings = DEFAULT_FIT_SETTINGS,
): (bytes: Uint8Array, opts: FitOptions) => Promise<FitResult> {
  return (bytes, opts) => fitImage(bytes, opts, wasm, settings);
}
