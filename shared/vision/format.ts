/**
 * Image type and size from the first bytes, never from a name or a declared type. Owns the
 * "what is this and how big is it" question that must be answered before any decode, so that
 * oversized or undecodable images are refused cheaply (413/415/400) instead of blowing the
 * isolate's 128 MB.
 */
import { AppError } from "../http/errors";

export type SupportedMediaType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

export interface ImageHeader {
  mediaType: SupportedMediaType;
  width: number;
  height: number;
  /** GIF with more than one image block is not detected here (needs a full scan); WebP VP8X says so. */
  animated: boolean;
  /** PNG only: Adam7 interlacing cannot be decoded row by row. */
  interlaced: boolean;
  /** JPEG only: progressive files keep every coefficient in memory while decoding. */
  progressive: boolean;
  /**
   * EXIF orientation (1..8; 1 when absent or not a JPEG): how the stored pixels must be turned for
   * display. `width`/`height` are the stored size; 5..8 swap them on screen.
   */
  orientation: number;
}

const HEIC_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]);
const HEIF_BRANDS = new Set(["mif1", "msf1", "mif2", "miaf"]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

function ascii(bytes: Uint8Array, start: number, length: number): string {
  let out = "";
  for (let i = start; i < start + length && i < bytes.length; i++) out += String.fromCharCode(bytes[i]!);
  return out;
}

function truncated(format: string): AppError {
  return new AppError(400, "invalid_request", `The ${format} image is truncated: its header ends before the image size. Send the complete file.`);
}

function unsupported(message: string): AppError {
  return new AppError(415, "unsupported_media_type", message);
}

const EXPORT_HINT = "Export or convert it to JPEG or PNG (on an iPhone: Settings > Camera > Formats > Most Compatible, or share the photo as JPEG) and send it again.";

/**
 * Reads the type and pixel size from the header bytes without decoding any pixel data.
 * @throws AppError 415 for HEIC/HEIF/AVIF (named), BMP/TIFF/SVG and unknown bytes; 400 when a
 * known header is cut short.
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return readJpeg(bytes);
  if (bytes.length >= 8 && ascii(bytes, 0, 8) === "\x89PNG\r\n\x1a\n") return readPng(bytes);
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a")) return readGif(bytes);
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return readWebp(bytes);
  if (bytes.length >= 12 && ascii(bytes, 4, 4) === "ftyp") throw isoBmffError(bytes);
  if (bytes.length >= 2 && ascii(bytes, 0, 2) === "BM") throw unsupported("The image is a BMP, which is not supported. Convert it to JPEG or PNG and send it again.");
  if (bytes.length >= 4 && (ascii(bytes, 0, 4) === "II*\0" || ascii(bytes, 0, 4) === "MM\0*")) throw unsupported("The image is a TIFF, which is not supported. Convert it to JPEG or PNG and send it again.");
  if (looksLikeSvg(bytes)) throw unsupported("The image is an SVG (vector text), which is not supported. Render it to PNG and send it again.");
  throw unsupported("The bytes are not a supported image (JPEG, PNG, GIF or WebP were expected, detected from the content, not the name).");
}

function looksLikeSvg(bytes: Uint8Array): boolean {
  const head = ascii(bytes, 0, 512).replace(/^\ufeff/, "").trimStart().toLowerCase();
  return head.startsWith("<svg") || (head.startsWith("<?xml") && head.includes("<svg"));
}

/** HEIF family: the answer depends on the brands of the ftyp box, read only within its declared size. */
function isoBmffError(bytes: Uint8Array): AppError {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let boxSize = view.getUint32(0);
  let brandsStart = 16;
  if (boxSize === 1) {
    if (bytes.length < 16) return truncated("HEIF/AVIF");
    boxSize = Number(view.getBigUint64(8));
    brandsStart = 24;
  } else if (boxSize === 0) {
    boxSize = bytes.length;
  }
  const boxEnd = Math.min(boxSize, bytes.length);
  const brands = [ascii(bytes, brandsStart - 8, 4)];
  for (let at = brandsStart; at + 4 <= boxEnd; at += 4) brands.push(ascii(bytes, at, 4));
  if (brands.some((b) => AVIF_BRANDS.has(b))) {
    return unsupported(`The image is AVIF, which this service cannot decode. ${EXPORT_HINT}`);
  }
  if (brands.some((b) => HEIC_BRANDS.has(b))) {
    return unsupported(`The image is HEIC (an iPhone photo format), which this service cannot decode. ${EXPORT_HINT}`);
  }
  if (brands.some((b) => HEIF_BRANDS.has(b))) {
    return unsupported(`The image is HEIF, which this service cannot decode. ${EXPORT_HINT}`);
  }
  return unsupported(`The file is an ISO media container (brand "${brands[0]}"), not a supported image. Send a JPEG, PNG, GIF or WebP.`);
}

/** Markers that stand alone (no length field). */
function isStandalone(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8);
}

/** SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** The Orientation tag (0x0112) of IFD0 in an APP1 "Exif" segment; 1 when absent or malformed. */
function exifOrientation(bytes: Uint8Array, start: number, end: number): number {
  if (end - start < 14 || ascii(bytes, start, 6) !== "Exif\0\0") return 1;
  const tiff = start + 6;
  const little = ascii(bytes, tiff, 2) === "II";
  if (!little && ascii(bytes, tiff, 2) !== "MM") return 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u16 = (at: number) => (at + 2 <= end ? view.getUint16(at, little) : -1);
  const ifd = tiff + (tiff + 8 <= end ? view.getUint32(tiff + 4, little) : end);
  const entries = u16(ifd);
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > end) break;
    if (u16(entry) === 0x0112 && u16(entry + 2) === 3) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : 1;
    }
  }
  return 1;
}

function readJpeg(bytes: Uint8Array): ImageHeader {
  let at = 2;
  let orientation = 1;
  while (at < bytes.length) {
    if (bytes[at] !== 0xff) {
      throw new AppError(400, "invalid_request", "The JPEG image is corrupt: its header has no valid marker where one was expected. Send the original file.");
    }
    while (at < bytes.length && bytes[at] === 0xff) at++; // fill bytes
    if (at >= bytes.length) break;
    const marker = bytes[at]!;
    at++;
    if (isStandalone(marker)) continue;
    if (at + 2 > bytes.length) break;
    const length = (bytes[at]! << 8) | bytes[at + 1]!;
    if (length < 2) throw new AppError(400, "invalid_request", "The JPEG image is corrupt: a header segment has an invalid length.");
    if (isStartOfFrame(marker)) {
      if (at + 7 > bytes.length) break;
      const height = (bytes[at + 3]! << 8) | bytes[at + 4]!;
      const width = (bytes[at + 5]! << 8) | bytes[at + 6]!;
      if (marker !== 0xc0 && marker !== 0xc1 && marker !== 0xc2) {
        throw unsupported("The JPEG uses lossless, hierarchical or arithmetic coding, which is not supported. Re-save it as a standard JPEG or PNG.");
      }
      if (width === 0 || height === 0) throw new AppError(400, "invalid_request", "The JPEG image declares a zero width or height.");
      return { mediaType: "image/jpeg", width, height, animated: false, interlaced: false, progressive: marker === 0xc2, orientation };
    }
    if (marker === 0xda || marker === 0xd9) {
      throw new AppError(400, "invalid_request", "The JPEG image is corrupt: it has no frame header before its image data.");
    }
    if (marker === 0xe1 && orientation === 1) orientation = exifOrientation(bytes, at + 2, Math.min(bytes.length, at + length));
    at += length;
  }
  throw truncated("JPEG");
}

function readPng(bytes: Uint8Array): ImageHeader {
  if (bytes.length < 33) throw truncated("PNG");
  if (ascii(bytes, 12, 4) !== "IHDR") throw new AppError(400, "invalid_request", "The PNG image is corrupt: it does not start with an IHDR chunk.");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width === 0 || height === 0) throw new AppError(400, "invalid_request", "The PNG image declares a zero width or height.");
  return { mediaType: "image/png", width, height, animated: false, interlaced: bytes[28] === 1, progressive: false, orientation: 1 };
}

function readGif(bytes: Uint8Array): ImageHeader {
  if (bytes.length < 10) throw truncated("GIF");
  const width = bytes[6]! | (bytes[7]! << 8);
  const height = bytes[8]! | (bytes[9]! << 8);
  if (width === 0 || height === 0) throw new AppError(400, "invalid_request", "The GIF image declares a zero width or height.");
  return { mediaType: "image/gif", width, height, animated: countGifFrames(bytes, 2) > 1, interlaced: false, progressive: false, orientation: 1 };
}

/** Walks GIF blocks (no decompression) and counts image descriptors, stopping at `limit`. */
function countGifFrames(bytes: Uint8Array, limit: number): number {
  let at = 13;
  if (bytes[10]! & 0x80) at += 3 * (1 << ((bytes[10]! & 7) + 1));
  let frames = 0;
  const skipSubBlocks = () => {
    while (at < bytes.length && bytes[at] !== 0) at += bytes[at]! + 1;
    at++;
  };
  while (at < bytes.length && frames < limit) {
    const block = bytes[at]!;
    if (block === 0x2c) {
      frames++;
      const flags = bytes[at + 9] ?? 0;
      at += 10;
      if (flags & 0x80) at += 3 * (1 << ((flags & 7) + 1));
      at++; // LZW minimum code size
      skipSubBlocks();
    } else if (block === 0x21) {
      at += 2;
      skipSubBlocks();
    } else {
      break; // trailer or garbage
    }
  }
  return frames;
}

function readWebp(bytes: Uint8Array): ImageHeader {
  const chunk = ascii(bytes, 12, 4);
  const base = { mediaType: "image/webp" as const, interlaced: false, progressive: false, orientation: 1 };
  if (chunk === "VP8 ") {
    if (bytes.length < 30) throw truncated("WebP");
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) {
      throw new AppError(400, "invalid_request", "The WebP image is corrupt: its VP8 frame has no start code.");
    }
    const width = (bytes[26]! | (bytes[27]! << 8)) & 0x3fff;
    const height = (bytes[28]! | (bytes[29]! << 8)) & 0x3fff;
    return { ...base, width, height, animated: false };
  }
  if (chunk === "VP8L") {
    if (bytes.length < 25) throw truncated("WebP");
    if (bytes[20] !== 0x2f) throw new AppError(400, "invalid_request", "The WebP image is corrupt: its lossless header has no signature.");
    const bits = bytes[21]! | (bytes[22]! << 8) | (bytes[23]! << 16) | (bytes[24]! << 24);
    const width = (bits & 0x3fff) + 1;
    const height = ((bits >>> 14) & 0x3fff) + 1;
    return { ...base, width, height, animated: false };
  }
  if (chunk === "VP8X") {
    if (bytes.length < 30) throw truncated("WebP");
    const animated = (bytes[20]! & 0x02) !== 0;
    const width = (bytes[24]! | (bytes[25]! << 8) | (bytes[26]! << 16)) + 1;
    const height = (bytes[27]! | (bytes[28]! << 8) | (bytes[29]! << 16)) + 1;
    return { ...base, width, height, animated };
  }
  if (bytes.length < 20) throw truncated("WebP");
  throw new AppError(400, "invalid_request", `The WebP image is corrupt: unknown first chunk "${chunk}".`);
}
