/**
 * An exact Lanczos-3 resize, the yardstick the fidelity tests and the vision benchmarks measure
 * against: f64 weights and sums, pixel centres aligned, no rounding. Written apart from the
 * service's resampler (shared/imaging/resample.ts) on purpose, and used both ways: down for a
 * reference, up for an output smaller than the size it is compared at (libvips' "lanczos3"
 * enlargement is Catmull-Rom half an output pixel off centre: docs/vision-decisions.md, "The enlargement
 * in the yardstick").
 */
import sharp from "sharp";

/** The long-edge cap the fits are measured at (the service's default `vision.max_long_edge`). */
const MAX_EDGE = 1568;

/** Lanczos-3 weight at `x` (in source pixels of the kernel's own scale). */
function lanczos3(x: number): number {
  if (x === 0) return 1;
  if (Math.abs(x) >= 3) return 0;
  const px = Math.PI * x;
  return (3 * Math.sin(px) * Math.sin(px / 3)) / (px * px);
}

/** Per output pixel, the source indices (clamped at the edges) and normalised weights of Lanczos-3 from `n` to `out`. */
function lanczosTaps(n: number, out: number): Array<{ at: number[]; weight: number[] }> {
  const scale = n / out;
  const stretch = Math.max(1, scale);
  return Array.from({ length: out }, (_, o) => {
    const centre = (o + 0.5) * scale - 0.5;
    const at: number[] = [],
      weight: number[] = [];
    for (let i = Math.floor(centre - 3 * stretch); i <= Math.ceil(centre + 3 * stretch); i++) {
      const w = lanczos3((i - centre) / stretch);
      if (w === 0) continue;
      at.push(Math.min(n - 1, Math.max(0, i)));
      weight.push(w);
    }
    const sum = weight.reduce((a, b) => a + b, 0);
    return { at, weight: weight.map((w) => w / sum) };
  });
}

/**
 * `rgb` (w x h) resized to `width` x `height` by an exact Lanczos-3: f64 weights and sums, pixel
 * centres aligned, no rounding between the passes or after them (clamped to 0..255). The same
 * kernel both ways: down for the reference, up for an output smaller than the full target size.
 */
export function lanczosExact(
  rgb: ArrayLike<number>,
  w: number,
  h: number,
  width: number,
  height: number,
): Float64Array {
  const across = lanczosTaps(w, width),
    down = lanczosTaps(h, height);
  const rows = new Float64Array(h * width * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < width; x++) {
      const { at, weight } = across[x]!;
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        for (let k = 0; k < at.length; k++) sum += weight[k]! * rgb[(y * w + at[k]!) * 3 + c]!;
        rows[(y * width + x) * 3 + c] = sum;
      }
    }
  const out = new Float64Array(height * width * 3);
  for (let y = 0; y < height; y++) {
    const { at, weight } = down[y]!;
    for (let i = 0; i < width * 3; i++) {
      let sum = 0;
      for (let k = 0; k < at.length; k++) sum += weight[k]! * rows[at[k]! * width * 3 + i]!;
      out[y * width * 3 + i] = Math.min(255, Math.max(0, sum));
    }
  }
  return out;
}

const exactReferences = new Map<Buffer, { width: number; height: number; rgb: Float64Array }>();

/**
 * The original (decoded by libvips in sRGB, flattened on white) at the full target size by the
 * exact Lanczos-3. Neither fit's resampler is the reference here: libvips' render measured 47–56 dB
 * from this one on the bench's inputs, ours 59–64 dB (docs/vision-decisions.md, "Two references").
 */
async function exactReferenceAtFull(original: Buffer): Promise<{ width: number; height: number; rgb: Float64Array }> {
  const known = exactReferences.get(original);
  if (known) return known;
  const { data, info } = await sharp(original)
    .flatten({ background: "#ffffff" })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const [w, h] = [info.width, info.height];
  const scale = Math.min(1, MAX_EDGE / Math.max(w, h));
  const [width, height] = [Math.max(1, Math.round(w * scale)), Math.max(1, Math.round(h * scale))];
  const reference = { width, height, rgb: lanczosExact(data, w, h, width, height) };
  exactReferences.set(original, reference);
  return reference;
}

/**
 * The exact Lanczos-3 reference at the full target size (the original within the long-edge cap),
 * and `output` shown there: as it is at that size, else enlarged by the same exact Lanczos-3.
 */
export async function atFullExact(
  original: Buffer,
  output: Uint8Array,
): Promise<{ width: number; height: number; reference: Float64Array; shown: ArrayLike<number> }> {
  const { width, height, rgb } = await exactReferenceAtFull(original);
  const decoded = await sharp(output).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const shown =
    decoded.info.width === width && decoded.info.height === height
      ? decoded.data
      : lanczosExact(decoded.data, decoded.info.width, decoded.info.height, width, height);
  return { width, height, reference: rgb, shown };
}
