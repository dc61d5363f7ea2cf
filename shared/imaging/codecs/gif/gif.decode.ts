/**
 * GIF decode in JS, row by row: the first frame's LZW data (gif.lzw.ts) fills one row of palette
 * indices at a time, which is painted into an RGB row of the logical screen (transparent pixels and
 * whatever the frame does not cover flattened on white, as libvips shows them) and handed
 * to the resampler. An interlaced frame stores its even rows first, so those are kept as indices
 * (half a byte per pixel of the frame) until the fourth pass brings the odd rows in order.
 */
import { walkGifFrames, type ImageHeader } from "../../../media/image-header";
import type { ResamplerFactory } from "../codec";
import type { StreamingResampler } from "../../resample";
import { decodeGifFrame } from "./gif.lzw";

/** The four passes of an interlaced frame: [first row, step]. */
const GIF_PASSES = [
  [0, 8],
  [4, 8],
  [2, 4],
  [1, 2],
] as const;

/** Decodes the first frame of a GIF (the header sniff has walked every block) into the resampler. */
export function decodeGifRows(
  bytes: Uint8Array,
  header: ImageHeader,
  makeResampler: ResamplerFactory,
): StreamingResampler {
  const frame = walkGifFrames(bytes, header.width, header.height)[0]!;
  const { width, height } = header;
  const resampler = makeResampler(width, height);
  const white = new Uint8Array(width * 3).fill(255);
  const rgb = new Uint8Array(width * 3).fill(255); // columns outside the frame stay white
  const palette = frame.palette ?? new Uint8Array(0);
  const colours = Math.floor(palette.length / 3);
  const fw = frame.width,
    fh = frame.height;

  let screenRow = 0; // next row of the logical screen to hand over
  const blankUntil = (row: number) => {
    for (; screenRow < row; screenRow++) if (resampler.wantsRow(screenRow)) resampler.pushRow(screenRow, white);
  };
  /** Hands over frame row `y`, its indices at `at` in `indices`. */
  const frameRow = (y: number, indices: Uint8Array, at: number) => {
    blankUntil(frame.top + y);
    if (resampler.wantsRow(screenRow)) {
      for (let x = 0, o = frame.left * 3; x < fw; x++, o += 3) {
        const i = indices[at + x]!;
        if (i === frame.transparentIndex) {
          rgb[o] = rgb[o + 1] = rgb[o + 2] = 255;
        } else if (i < colours) {
          rgb[o] = palette[i * 3]!;
          rgb[o + 1] = palette[i * 3 + 1]!;
          rgb[o + 2] = palette[i * 3 + 2]!;
        } else {
          rgb[o] = rgb[o + 1] = rgb[o + 2] = 0; // an index past the table: black, as decoders do
        }
      }
      resampler.pushRow(screenRow, rgb);
    }
    screenRow++;
  };

  // Frame rows in storage order; an interlaced frame's even rows wait in `evens` for the odd ones.
  const line = new Uint8Array(fw);
  const evens = new Uint8Array(frame.interlaced ? fw * Math.ceil(fh / 2) : 0);
  const order: number[] = [];
  if (frame.interlaced) for (const [start, step] of GIF_PASSES) for (let y = start; y < fh; y += step) order.push(y);
  let nth = 0,
    x = 0,
    nextOut = 0;
  const target = () =>
    frame.interlaced && order[nth]! % 2 === 0
      ? evens.subarray((order[nth]! >> 1) * fw, ((order[nth]! >> 1) + 1) * fw)
      : line;
  let row = target();
  const rowDone = () => {
    const y = frame.interlaced ? order[nth]! : nth;
    if (!frame.interlaced) frameRow(y, line, 0);
    else if (y % 2 === 1) {
      for (; nextOut < y; nextOut += 2) frameRow(nextOut, evens, (nextOut >> 1) * fw);
      frameRow(y, line, 0);
      nextOut = y + 1;
    }
    nth++;
    x = 0;
    if (nth < fh) row = target();
  };
  decodeGifFrame(bytes, frame, 1, (indices, count) => {
    // Strings are short (a few indices): a plain loop, no subarray per code.
    for (let k = 0; k < count; k++) {
      row[x++] = indices[k]!;
      if (x === fw) rowDone();
    }
  });
  for (; frame.interlaced && nextOut < fh; nextOut += 2) frameRow(nextOut, evens, (nextOut >> 1) * fw);
  blankUntil(height);
  return resampler;
}
