/**
 * PSNR as every vision bench measures it: against the original as sharp shows it (flattened on
 * white, Lanczos3) at the output's size, and at the full target size (a smaller output scaled back
 * up to the long-edge cap first); the table also measures the latter against an exact
 * Lanczos-3 of the original, which neither fit's resampler produces.
 */
import sharp from "sharp";

const MAX_EDGE = 1568;

/** PSNR (RGB) of `output` against the original resized by sharp (Lanczos3) to the output's size. */
export async function psnr(original: Buffer, output: Uint8Array): Promise<number> {
  const out = await sharp(output).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return psnrOf(await referenceAt(original, out.info.width, out.info.height), out.data);
}

/**
 * The original as sharp shows it at `width`x`height` (flattened, Lanczos3, without its JPEG
 * shrink-on-load, which puts a JPEG screenshot's render 19 dB further from an exact Lanczos-3):
 * what every PSNR here is measured against.
 */
export async function referenceAt(original: Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(original)
    .flatten({ background: "#ffffff" })
    .resize(width, height, { fit: "fill", kernel: "lanczos3", fastShrinkOnLoad: false })
    .removeAlpha()
    .raw()
    .toBuffer();
}

export function psnrOf(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let se = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    se += d * d;
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * a.length) / se);
}

/** PSNR at the full target size: an output smaller than the long-edge cap allows is scaled back up (Lanczos3) first. */
export async function psnrAtFull(original: Buffer, output: Uint8Array): Promise<number> {
  const meta = await sharp(original).metadata();
  const scale = Math.min(1, MAX_EDGE / Math.max(meta.width!, meta.height!));
  const w = Math.max(1, Math.round(meta.width! * scale)),
    h = Math.max(1, Math.round(meta.height! * scale));
  const shown = await sharp(output).removeAlpha().resize(w, h, { fit: "fill", kernel: "lanczos3" }).raw().toBuffer();
  return psnrOf(await referenceAt(original, w, h), shown);
}

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

const exactReferences = new Map<Buffer, { width: number; height: number; rgb: Float64Array }>();

/**
 * The original (decoded by libvips in sRGB, flattened on white) at the full target size by an exact
 * Lanczos-3: f64 weights and sums, pixel centres aligned, no rounding between the passes or after
 * them. Neither fit's resampler is the reference here: libvips' render measured 47–56 dB from this
 * one on the bench's inputs, ours 59–64 dB (docs/benchmarks.md, "Two references").
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
  const across = lanczosTaps(w, width),
    down = lanczosTaps(h, height);
  const rows = new Float64Array(h * width * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < width; x++) {
      const { at, weight } = across[x]!;
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        for (let k = 0; k < at.length; k++) sum += weight[k]! * data[(y * w + at[k]!) * 3 + c]!;
        rows[(y * width + x) * 3 + c] = sum;
      }
    }
  const rgb = new Float64Array(height * width * 3);
  for (let y = 0; y < height; y++) {
    const { at, weight } = down[y]!;
    for (let i = 0; i < width * 3; i++) {
      let sum = 0;
      for (let k = 0; k < at.length; k++) sum += weight[k]! * rows[at[k]! * width * 3 + i]!;
      rgb[y * width * 3 + i] = Math.min(255, Math.max(0, sum));
    }
  }
  const reference = { width, height, rgb };
  exactReferences.set(original, reference);
  return reference;
}

/** PSNR at the full target size (a smaller output scaled back up by libvips' Lanczos-3 first) against the exact Lanczos-3 of the original there. */
export async function psnrAtFullExact(original: Buffer, output: Uint8Array): Promise<number> {
  const { width, height, rgb } = await exactReferenceAtFull(original);
  const shown = await sharp(output)
    .removeAlpha()
    .resize(width, height, { fit: "fill", kernel: "lanczos3" })
    .raw()
    .toBuffer();
  return psnrOf(rgb, shown);
}
