/**
 * PSNR as every vision bench measures it: against the original as sharp shows it (flattened on
 * white, Lanczos3) at the output's size, and at the full target size (a smaller output scaled back
 * up to the long-edge cap first); the table also measures the latter against an exact
 * Lanczos-3 of the original, which neither fit's resampler produces.
 */
import sharp from "sharp";
import { atFullExact } from "../test/support/lanczos-exact";

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

/**
 * PSNR at the full target size against the exact Lanczos-3 of the original there; a smaller output
 * is scaled back up by the same exact Lanczos-3 first. libvips' "lanczos3" enlargement is
 * Catmull-Rom sampled half an output pixel off centre (the libvips sharp bundles): on a 1390x782
 * output of a dark UI screenshot it measured 33.2 dB from the exact enlargement, ours 64.2 dB, and
 * it put the output 3.9 dB further from the reference (docs/vision-decisions.md, "The enlargement in the
 * yardstick").
 */
export async function psnrAtFullExact(original: Buffer, output: Uint8Array): Promise<number> {
  const { reference, shown } = await atFullExact(original, output);
  return psnrOf(reference, shown);
}
