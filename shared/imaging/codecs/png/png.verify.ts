/**
 * The PNG pass-through check: the whole zlib stream inflated, every row's filter byte read, and
 * exactly the rows the size (and, interlaced, each Adam7 pass) needs. The chunk walk (CRCs, order)
 * has run already (parseChunks).
 */
import { invalidImage } from "../../../media/image-header";
import { ADAM7, CHANNELS, type PngInfo } from "./png.decode";
import { ZlibInflater } from "./png.inflate";

/** Length of each filtered scanline (filter byte included), pass by pass for Adam7. */
function* scanlineLengths(info: PngInfo): Generator<number> {
  const bitsPerPixel = CHANNELS[info.colorType]! * info.bitDepth;
  const line = (width: number) => 1 + Math.ceil((width * bitsPerPixel) / 8);
  if (!info.interlaced) {
    for (let y = 0; y < info.height; y++) yield line(info.width);
    return;
  }
  for (const [x0, y0, dx, dy] of ADAM7) {
    const width = Math.ceil((info.width - x0) / dx),
      rows = Math.ceil((info.height - y0) / dy);
    if (width > 0) for (let y = 0; y < rows; y++) yield line(width);
  }
}

/** Inflates all of the IDAT data, checking every row's filter byte and that the stream holds exactly the rows. */
export function verifyPngData(info: PngInfo, zlib: WebAssembly.Module): void {
  const lines = scanlineLengths(info);
  let left = 0; // bytes left in the current scanline; 0 = its filter byte is next
  let rows = 0;
  const inflater = new ZlibInflater(zlib, info.idat);
  for (;;) {
    const data = inflater.next();
    if (!data) break;
    for (let at = 0; at < data.length; ) {
      if (left === 0) {
        const next = lines.next();
        if (next.done)
          throw invalidImage(
            "PNG",
            `could not be decoded: its compressed data holds more than the ${info.width}x${info.height} pixels it declares`,
          );
        if (data[at]! > 4)
          throw invalidImage("PNG", `could not be decoded: row ${rows} has an unknown filter type ${data[at]}`);
        left = next.value - 1;
        rows++;
        at++;
        continue;
      }
      const take = Math.min(left, data.length - at);
      left -= take;
      at += take;
    }
  }
  if (left > 0 || !lines.next().done)
    throw invalidImage("PNG", `is truncated: its compressed data ends in or before row ${rows} of its scanlines`);
}
