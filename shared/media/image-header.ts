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
  /** GIF with more than one image descriptor; WebP with VP8X animation frames. */
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
  /** JPEG only: colour components in the frame (1 grey, 3 YCbCr/RGB, 4 CMYK/YCCK). */
  components?: number;
}

const HEIC_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]);
const HEIF_BRANDS = new Set(["mif1", "msf1", "mif2", "miaf"]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

function ascii(bytes: Uint8Array, start: number, length: number): string {
  let out = "";
  for (let i = start; i < start + length && i < bytes.length; i++) out += String.fromCharCode(bytes[i]!);
  return out;
}

/**
 * 400 `invalid_image` (api.md): the image's data is broken, or its frame and container disagree.
 * `what` completes "The PNG image ..." and names what is wrong.
 */
export function invalidImage(format: string, what: string, cause?: unknown): AppError {
  return new AppError(
    400,
    "invalid_image",
    `The ${format} image ${what}. Re-save or re-export it and send the complete file.`,
    { cause },
  );
}

function truncated(format: string): AppError {
  return invalidImage(format, "is truncated: its header ends before the image size");
}

function unsupported(message: string): AppError {
  return new AppError(415, "unsupported_media_type", message);
}

const EXPORT_HINT =
  "Export or convert it to JPEG or PNG (on an iPhone: Settings > Camera > Formats > Most Compatible, or share the photo as JPEG) and send it again.";

/**
 * Reads the type and pixel size from the header bytes without decoding any pixel data.
 * @throws AppError 415 for HEIC/HEIF/AVIF (named), BMP/TIFF/SVG and unknown bytes; 400 when a
 * known header is cut short.
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader {
  const type = mediaTypeOf(bytes);
  if (type === "image/jpeg") return new JpegMarkerWalk(bytes).header();
  if (type === "image/png") return readPng(bytes);
  if (type === "image/gif") return readGif(bytes);
  if (type === "image/webp") return readWebp(bytes);
  if (bytes.length >= 12 && ascii(bytes, 4, 4) === "ftyp") throw isoBmffError(bytes);
  if (bytes.length >= 2 && ascii(bytes, 0, 2) === "BM")
    throw unsupported("The image is a BMP, which is not supported. Convert it to JPEG or PNG and send it again.");
  if (bytes.length >= 4 && (ascii(bytes, 0, 4) === "II*\0" || ascii(bytes, 0, 4) === "MM\0*"))
    throw unsupported("The image is a TIFF, which is not supported. Convert it to JPEG or PNG and send it again.");
  if (looksLikeSvg(bytes))
    throw unsupported("The image is an SVG (vector text), which is not supported. Render it to PNG and send it again.");
  throw unsupported(
    "The bytes are not a supported image (JPEG, PNG, GIF or WebP were expected, detected from the content, not the name).",
  );
}

/**
 * readImageHeader, keeping a JPEG's marker walk: the rest of a fit resumes it (toEnd) instead of
 * walking the file again.
 */
export function openImage(bytes: Uint8Array): { header: ImageHeader; jpeg?: JpegMarkerWalk } {
  if (!isJpeg(bytes)) return { header: readImageHeader(bytes) };
  const jpeg = new JpegMarkerWalk(bytes);
  return { header: jpeg.header(), jpeg };
}

/** The supported type a file's first bytes (its signature, 12 at most) say it is, or null. */
export function mediaTypeOf(bytes: Uint8Array): SupportedMediaType | null {
  if (isJpeg(bytes)) return "image/jpeg";
  if (bytes.length >= 8 && ascii(bytes, 0, 8) === "\x89PNG\r\n\x1a\n") return "image/png";
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === "GIF87a" || ascii(bytes, 0, 6) === "GIF89a")) return "image/gif";
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return "image/webp";
  return null;
}

function isJpeg(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}

/** SVG text, with or without a UTF-8 byte order mark, an XML declaration, comments or a doctype first. */
function looksLikeSvg(bytes: Uint8Array): boolean {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const head = ascii(bytes, bom, 1024).trimStart().toLowerCase();
  if (head.startsWith("<svg")) return true;
  return (head.startsWith("<?xml") || head.startsWith("<!--") || head.startsWith("<!doctype")) && head.includes("<svg");
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
  return unsupported(
    `The file is an ISO media container (brand "${brands[0]}"), not a supported image. Send a JPEG, PNG, GIF or WebP.`,
  );
}

/** Markers that stand alone (no length field). */
function isStandalone(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8);
}

/** SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/**
 * The sampling factors of a frame header (`sof`: the segment after its length field). T.81 allows
 * 1..4 per component in any combination; libjpeg-turbo (ours, and libvips's) upsamples a component
 * only by a whole ratio of the largest factors, so 3x1 luma with 2x1 chroma is refused by every
 * libjpeg, while 4:1:0 or 1x1 luma with 2x2 chroma decode.
 * @throws AppError 400 `invalid_image` for a short frame header or a factor outside 1..4; 415 for a
 * fractional ratio (a valid file no decoder we have reads).
 */
function checkSampling(sof: Uint8Array): void {
  const count = sof[5] ?? 0;
  if (sof.length < 6 + 3 * count)
    throw invalidImage("JPEG", `is corrupt: its frame header (SOF) is shorter than its ${count} components need`);
  const factors: [number, number][] = [];
  for (let c = 0; c < count; c++) {
    const hv = sof[7 + 3 * c]!,
      h = hv >> 4,
      v = hv & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4)
      throw invalidImage("JPEG", `is corrupt: component ${c + 1} declares sampling factors ${h}x${v} (1 to 4 allowed)`);
    factors.push([h, v]);
  }
  const hMax = Math.max(...factors.map(([h]) => h)),
    vMax = Math.max(...factors.map(([, v]) => v));
  if (factors.some(([h, v]) => hMax % h !== 0 || vMax % v !== 0)) {
    throw unsupported(
      `The JPEG samples its components at ${factors.map(([h, v]) => `${h}x${v}`).join(", ")}: a valid layout, but one whose ratios are not whole numbers, which libjpeg-turbo (the decoder here and in libvips) cannot upsample. Re-save it as a standard JPEG (4:2:0 or 4:4:4) or PNG and send it again.`,
    );
  }
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

/**
 * Scans a JPEG may have. Each progressive scan makes libjpeg walk every block of the image again,
 * so a small file of thousands of scans costs seconds of CPU; real encoders write 10 to 20
 * (libjpeg-turbo's own tools refuse past 500). What a large progressive photo padded to the limit
 * and past it costs is in docs/benchmarks.md ("Isolate memory", the adversarial set).
 */
export const JPEG_MAX_SCANS = 64;

/** What the segments before the first scan say about colour: the ICC profile and Adobe's APP14. */
export interface JpegColorInfo {
  /** The APP2 "ICC_PROFILE" chunks joined in sequence order; absent when none or incomplete. */
  icc?: Uint8Array;
  /** An Adobe APP14 segment is present (its CMYK is stored inverted). */
  adobe: boolean;
}

/** What a JPEG's walk to EOI found: its scans, and its colour segments. */
export interface JpegStructure extends JpegColorInfo {
  scans: number;
  /** Arithmetic-coded (SOF9/SOF10): decoded here, never embedded unchanged (docs/vision-formats.md). */
  arithmetic: boolean;
}

/**
 * The one walk over a JPEG's marker segments, read as far as it is asked. `header()` stops at the
 * frame header (SOF): the size every caller checks before anything else, cheap to read. `toEnd()`
 * resumes from there to EOI: every segment inside the file, entropy-coded data skipped (stuffed
 * 0x00, RSTn and fill bytes), scans counted, a second SOF refused. On the way it keeps the first
 * usable EXIF orientation before SOF and the colour segments before the first scan (APP2
 * ICC_PROFILE chunks, Adobe APP14), so a fit walks each file once for all three.
 * @example
 * const walk = new JpegMarkerWalk(bytes);
 * const header = walk.header(); // 413/415 decided before anything else is read
 * const { scans, icc, adobe } = walk.toEnd();
 */
export class JpegMarkerWalk {
  private at = 2;
  private frame?: ImageHeader;
  private structure?: JpegStructure;
  private orientation = 1;
  private scans = 0;
  private frames = 0;
  private arithmetic = false;
  private adobe = false;
  private readonly iccChunks = new Map<number, Uint8Array>();
  private iccBytes = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /**
   * Walks to the frame header. @throws AppError 400 `invalid_image` for a header with no marker
   * where one belongs, a bad length, a zero size, image data before any SOF, or a cut before the
   * size; 415 for lossless or hierarchical coding.
   */
  header(): ImageHeader {
    while (!this.frame) this.headerStep();
    return this.frame;
  }

  /**
   * Walks on to EOI. @throws AppError 400 `invalid_image` when the file ends before EOI or has a
   * second frame header, 413 `image_too_large` past JPEG_MAX_SCANS scans.
   */
  toEnd(): JpegStructure {
    this.header();
    while (!this.structure) this.structureStep();
    return this.structure;
  }

  /** One segment before SOF, with the header's errors (what readImageHeader has always answered). */
  private headerStep(): void {
    const bytes = this.bytes;
    let at = this.at;
    if (at >= bytes.length) throw truncated("JPEG");
    if (bytes[at] !== 0xff)
      throw invalidImage("JPEG", `is corrupt: its header has no marker at byte ${at}, where one was expected`);
    while (at < bytes.length && bytes[at] === 0xff) at++; // fill bytes
    if (at >= bytes.length) throw truncated("JPEG");
    const marker = bytes[at++]!;
    this.at = at;
    if (isStandalone(marker)) return;
    if (at + 2 > bytes.length) throw truncated("JPEG");
    const length = (bytes[at]! << 8) | bytes[at + 1]!;
    if (length < 2) throw invalidImage("JPEG", "is corrupt: a header segment has an invalid length");
    if (isStartOfFrame(marker)) {
      if (at + 8 > bytes.length) throw truncated("JPEG");
      const height = (bytes[at + 3]! << 8) | bytes[at + 4]!;
      const width = (bytes[at + 5]! << 8) | bytes[at + 6]!;
      // Baseline, extended and progressive DCT, Huffman (SOF0-2) or arithmetic (SOF9-10) coded.
      if (marker !== 0xc0 && marker !== 0xc1 && marker !== 0xc2 && marker !== 0xc9 && marker !== 0xca) {
        throw unsupported(
          "The JPEG uses lossless or hierarchical coding, which is not supported. Re-save it as a standard JPEG or PNG.",
        );
      }
      this.arithmetic = marker === 0xc9 || marker === 0xca;
      if (width === 0 || height === 0) throw invalidImage("JPEG", "declares a zero width or height");
      const components = bytes[at + 7]!;
      this.frame = {
        mediaType: "image/jpeg",
        width,
        height,
        animated: false,
        interlaced: false,
        progressive: marker === 0xc2 || marker === 0xca,
        orientation: this.orientation,
        components,
      };
      this.at = at - 2; // the SOF's last 0xFF: the walk to EOI checks this segment in full
      return;
    }
    if (marker === 0xda || marker === 0xd9) {
      throw invalidImage("JPEG", "is corrupt: it has no frame header (SOF) before its image data");
    }
    const end = Math.min(bytes.length, at + length);
    if (marker === 0xe1 && this.orientation === 1) this.orientation = exifOrientation(bytes, at + 2, end);
    this.keepColor(marker, at + 2, end);
    this.at = at + length;
  }

  /** One segment from SOF on, with its entropy-coded data when it is a scan. */
  private structureStep(): void {
    const bytes = this.bytes;
    let at = this.at;
    const cut = () =>
      invalidImage(
        "JPEG",
        `is truncated: it ends ${this.scans === 0 ? "in its header" : `in scan ${this.scans}`}, before its end marker (EOI)`,
      );
    if (at >= bytes.length) throw cut();
    if (bytes[at] !== 0xff)
      throw invalidImage("JPEG", `is corrupt: byte ${at} is not the marker its structure needs there`);
    while (at < bytes.length && bytes[at] === 0xff) at++;
    if (at >= bytes.length) throw cut();
    const marker = bytes[at++]!;
    this.at = at;
    if (marker === 0xd9) {
      this.structure = { scans: this.scans, arithmetic: this.arithmetic, adobe: this.adobe, icc: this.joinedIcc() };
      return;
    }
    if (isStandalone(marker)) return;
    if (at + 2 > bytes.length) throw cut();
    const length = (bytes[at]! << 8) | bytes[at + 1]!;
    if (length < 2) throw invalidImage("JPEG", "is corrupt: a segment has an invalid length");
    if (at + length > bytes.length) throw cut();
    if (isStartOfFrame(marker)) {
      if (++this.frames > 1) throw invalidImage("JPEG", "is corrupt: it has a second frame header (SOF)");
      checkSampling(bytes.subarray(at + 2, at + length));
    }
    if (this.scans === 0) this.keepColor(marker, at + 2, at + length);
    at += length;
    this.at = at;
    if (marker !== 0xda) return;
    if (++this.scans > JPEG_MAX_SCANS) {
      throw new AppError(
        413,
        "image_too_large",
        `The JPEG image has more than ${JPEG_MAX_SCANS} scans, which would cost seconds of CPU to decode (real encoders write 10 to 20). Re-save it as a standard JPEG and send it again.`,
      );
    }
    // Entropy-coded data runs to the next marker that is neither a stuffed 0x00 nor a restart.
    for (;;) {
      at = bytes.indexOf(0xff, at);
      if (at < 0 || at + 1 >= bytes.length) throw cut();
      const next = bytes[at + 1]!;
      if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) at += next === 0xff ? 1 : 2;
      else break;
    }
    this.at = at;
  }

  /** Keeps an APP2 ICC_PROFILE chunk (the first of each sequence number) or notes an Adobe APP14. */
  private keepColor(marker: number, start: number, end: number): void {
    const bytes = this.bytes;
    if (marker === 0xe2 && end - start > 14 && ascii(bytes, start, 12) === "ICC_PROFILE\0") {
      const seq = bytes[start + 12]!;
      if (!this.iccChunks.has(seq)) {
        this.iccChunks.set(seq, bytes.subarray(start + 14, end));
        this.iccBytes += end - start - 14;
      }
    } else if (marker === 0xee && ascii(bytes, start, Math.min(5, end - start)) === "Adobe") {
      this.adobe = true;
    }
  }

  /** The ICC chunks joined in sequence order 1..n; undefined when there are none or one is missing. */
  private joinedIcc(): Uint8Array | undefined {
    if (this.iccChunks.size === 0) return undefined;
    const icc = new Uint8Array(this.iccBytes);
    let o = 0;
    for (let seq = 1; seq <= this.iccChunks.size; seq++) {
      const chunk = this.iccChunks.get(seq);
      if (!chunk) return undefined;
      icc.set(chunk, o);
      o += chunk.length;
    }
    return icc;
  }
}

function readPng(bytes: Uint8Array): ImageHeader {
  if (bytes.length < 33) throw truncated("PNG");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (ascii(bytes, 12, 4) !== "IHDR" || view.getUint32(8) !== 13)
    throw invalidImage("PNG", "is corrupt: it does not start with a 13-byte IHDR chunk");
  const width = view.getUint32(16);
  const height = view.getUint32(20);
  if (width === 0 || height === 0) throw invalidImage("PNG", "declares a zero width or height");
  return {
    mediaType: "image/png",
    width,
    height,
    animated: false,
    interlaced: bytes[28] === 1,
    progressive: false,
    orientation: 1,
  };
}

/**
 * GIF: the logical screen, with every block walked (no decompression) so that no image descriptor
 * can reach outside the screen: the decoder allocates what a frame declares, so the screen's size
 * bounds the decode only once every frame is checked against it.
 */
function readGif(bytes: Uint8Array): ImageHeader {
  if (bytes.length < 13) throw truncated("GIF");
  const width = bytes[6]! | (bytes[7]! << 8);
  const height = bytes[8]! | (bytes[9]! << 8);
  if (width === 0 || height === 0) throw invalidImage("GIF", "declares a zero width or height");
  const frames = walkGifFrames(bytes, width, height);
  return {
    mediaType: "image/gif",
    width,
    height,
    animated: frames.length > 1,
    interlaced: false,
    progressive: false,
    orientation: 1,
  };
}

/** One image of a GIF: where its descriptor says it is, and where its LZW data starts. */
export interface GifFrame {
  left: number;
  top: number;
  width: number;
  height: number;
  /** Offset of the LZW minimum code size byte; the data sub-blocks follow it. */
  dataStart: number;
  /** Rows stored in four passes (0, 8, 16...; 4, 12...; 2, 6...; 1, 3...). */
  interlaced: boolean;
  /** The colour table this frame uses (its own, else the global one): RGB triples; absent when the file has none. */
  palette?: Uint8Array;
  /** The palette index drawn as transparent (the Graphic Control Extension before the frame). */
  transparentIndex?: number;
}

/**
 * Walks every block of a GIF to its trailer and returns its images.
 * @throws AppError 400 `invalid_image` for a frame outside the logical screen, a block that runs
 * past the end (truncated), a missing trailer, an unknown block, or no image at all.
 */
export function walkGifFrames(bytes: Uint8Array, screenWidth: number, screenHeight: number): GifFrame[] {
  let at = 13;
  let globalPalette: Uint8Array | undefined;
  if (bytes[10]! & 0x80) {
    at += 3 * (1 << ((bytes[10]! & 7) + 1));
    globalPalette = bytes.subarray(13, at);
  }
  let transparentIndex: number | undefined;
  const frames: GifFrame[] = [];
  const cut = () =>
    invalidImage(
      "GIF",
      `is truncated: it ends inside ${frames.length === 0 ? "its header" : `frame ${frames.length}`}, before its trailer`,
    );
  const skipSubBlocks = () => {
    while (at < bytes.length && bytes[at] !== 0) at += bytes[at]! + 1;
    if (at >= bytes.length) throw cut();
    at++;
  };
  for (;;) {
    if (at >= bytes.length) throw cut();
    const block = bytes[at]!;
    if (block === 0x3b) break;
    if (block === 0x2c) {
      if (at + 10 > bytes.length) throw cut();
      const u16 = (o: number) => bytes[at + o]! | (bytes[at + o + 1]! << 8);
      const flags = bytes[at + 9]!;
      const frame: GifFrame = {
        left: u16(1),
        top: u16(3),
        width: u16(5),
        height: u16(7),
        dataStart: 0,
        interlaced: (flags & 0x40) !== 0,
        palette: globalPalette,
        transparentIndex,
      };
      if (frame.left + frame.width > screenWidth || frame.top + frame.height > screenHeight) {
        throw invalidImage(
          "GIF",
          `does not match its container: frame ${frames.length + 1} (${frame.width}x${frame.height} at ${frame.left},${frame.top}) reaches outside the ${screenWidth}x${screenHeight} logical screen`,
        );
      }
      at += 10;
      if (flags & 0x80) {
        const start = at;
        at += 3 * (1 << ((flags & 7) + 1));
        frame.palette = bytes.subarray(start, Math.min(at, bytes.length));
      }
      transparentIndex = undefined; // a Graphic Control Extension applies to the next image only
      if (at >= bytes.length) throw cut();
      frame.dataStart = at;
      const minCodeSize = bytes[at]!;
      if (minCodeSize < 1 || minCodeSize > 8)
        throw invalidImage(
          "GIF",
          `is corrupt: frame ${frames.length + 1} has an LZW code size of ${minCodeSize} (1..8 allowed)`,
        );
      frames.push(frame);
      at++;
      skipSubBlocks();
    } else if (block === 0x21) {
      // Graphic Control Extension: 4 bytes (flags, delay, transparent index); bit 0 of flags says it is set.
      if (bytes[at + 1] === 0xf9 && bytes[at + 2]! >= 4 && at + 6 < bytes.length)
        transparentIndex = bytes[at + 3]! & 1 ? bytes[at + 6]! : undefined;
      at += 2;
      skipSubBlocks();
    } else {
      throw invalidImage(
        "GIF",
        `is corrupt: byte ${at} (0x${block.toString(16).padStart(2, "0")}) starts no known block`,
      );
    }
  }
  if (frames.length === 0) throw invalidImage("GIF", "has no image in it (no image descriptor before its trailer)");
  return frames;
}

/** Size of a VP8 (lossy) or VP8L (lossless) bitstream, read from its frame header inside `chunk`. */
function webpFrameSize(kind: string, chunk: Uint8Array): { width: number; height: number } {
  if (kind === "VP8 ") {
    if (chunk.length < 10) throw invalidImage("WebP", "is truncated: its VP8 frame header is cut short");
    const tag = chunk[0]! | (chunk[1]! << 8) | (chunk[2]! << 16);
    if (tag & 1) throw invalidImage("WebP", "is corrupt: its VP8 frame is not a key frame");
    if (chunk[3] !== 0x9d || chunk[4] !== 0x01 || chunk[5] !== 0x2a)
      throw invalidImage("WebP", "is corrupt: its VP8 frame has no start code");
    const firstPartition = tag >>> 5;
    if (firstPartition > chunk.length - 10)
      throw invalidImage(
        "WebP",
        `is truncated: its VP8 frame's first partition (${firstPartition} bytes) runs past its ${chunk.length}-byte chunk`,
      );
    const width = (chunk[6]! | (chunk[7]! << 8)) & 0x3fff;
    const height = (chunk[8]! | (chunk[9]! << 8)) & 0x3fff;
    if (width === 0 || height === 0) throw invalidImage("WebP", "declares a zero width or height in its VP8 frame");
    return { width, height };
  }
  if (chunk.length < 5) throw invalidImage("WebP", "is truncated: its VP8L header is cut short");
  if (chunk[0] !== 0x2f) throw invalidImage("WebP", "is corrupt: its lossless (VP8L) header has no signature");
  const bits = (chunk[1]! | (chunk[2]! << 8) | (chunk[3]! << 16) | (chunk[4]! << 24)) >>> 0;
  if (bits >>> 29 !== 0) throw invalidImage("WebP", `is corrupt: its VP8L version is ${bits >>> 29}, not 0`);
  return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
}

/** One chunk of a RIFF body: its four-character code and its data (padding left out). */
export interface RiffChunk {
  fourcc: string;
  data: Uint8Array;
}

/** The chunks of a RIFF body (`bytes` from a chunk header on), each checked to fit inside it. */
function riffChunks(bytes: Uint8Array, where: string): RiffChunk[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: RiffChunk[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 8 > bytes.length) throw invalidImage("WebP", `is corrupt: ${where} ends inside a chunk header`);
    const fourcc = ascii(bytes, at, 4);
    const size = view.getUint32(at + 4, true);
    if (size > bytes.length - at - 8) {
      throw invalidImage(
        "WebP",
        `is truncated: its ${fourcc.trim()} chunk declares ${size} bytes but ${where} has ${bytes.length - at - 8} left`,
      );
    }
    chunks.push({ fourcc, data: bytes.subarray(at + 8, at + 8 + size) });
    at += 8 + size + (size & 1);
  }
  return chunks;
}

/**
 * The top-level chunks of a WebP ("RIFF", size, "WEBP", then chunks), the RIFF size checked against
 * the file and every chunk against the RIFF body: the one walk readImageHeader and the ICCP read use.
 * @throws AppError 400 `invalid_image` for a RIFF size or a chunk size that does not fit.
 */
export function webpChunks(bytes: Uint8Array): RiffChunk[] {
  const riffSize = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, true);
  if (riffSize < 12)
    throw invalidImage("WebP", `is corrupt: its RIFF header declares a ${riffSize}-byte body, too small for any image`);
  if (riffSize > bytes.length - 8) {
    throw invalidImage(
      "WebP",
      `is truncated: its RIFF header declares ${riffSize + 8} bytes but the file has ${bytes.length}`,
    );
  }
  return riffChunks(bytes.subarray(12, 8 + riffSize), "the RIFF container");
}

/**
 * WebP: the RIFF size and every chunk size are checked against the file, and the size that will be
 * decoded (the VP8/VP8L frame header, or every animation frame) against the VP8X canvas.
 */
function readWebp(bytes: Uint8Array): ImageHeader {
  const base = { mediaType: "image/webp" as const, interlaced: false, progressive: false, orientation: 1 };
  const chunks = webpChunks(bytes);
  const first = chunks[0];
  if (!first) throw invalidImage("WebP", "has no chunks after its RIFF header");
  if (first.fourcc === "VP8 " || first.fourcc === "VP8L")
    return { ...base, ...webpFrameSize(first.fourcc, first.data), animated: false };
  if (first.fourcc !== "VP8X") throw invalidImage("WebP", `is corrupt: unknown first chunk "${first.fourcc}"`);
  if (first.data.length < 10) throw invalidImage("WebP", "is truncated: its VP8X chunk is cut short");
  const x = first.data;
  const animated = (x[0]! & 0x02) !== 0;
  const width = (x[4]! | (x[5]! << 8) | (x[6]! << 16)) + 1;
  const height = (x[7]! | (x[8]! << 8) | (x[9]! << 16)) + 1;
  const canvas = `${width}x${height} VP8X canvas`;
  const image = (list: RiffChunk[]) => list.find((c) => c.fourcc === "VP8 " || c.fourcc === "VP8L");
  if (!animated) {
    const frame = image(chunks);
    if (!frame) throw invalidImage("WebP", "has no image data (no VP8 or VP8L chunk after its VP8X header)");
    const size = webpFrameSize(frame.fourcc, frame.data);
    if (size.width !== width || size.height !== height) {
      throw invalidImage(
        "WebP",
        `does not match its container: its ${frame.fourcc.trim()} frame is ${size.width}x${size.height} inside a ${canvas}`,
      );
    }
    return { ...base, width, height, animated };
  }
  let count = 0;
  for (const chunk of chunks) {
    if (chunk.fourcc !== "ANMF") continue;
    count++;
    const f = chunk.data;
    if (f.length < 16) throw invalidImage("WebP", `is truncated: animation frame ${count} has a short header`);
    const u24 = (o: number) => f[o]! | (f[o + 1]! << 8) | (f[o + 2]! << 16);
    const left = u24(0) * 2,
      top = u24(3) * 2,
      fw = u24(6) + 1,
      fh = u24(9) + 1;
    if (left + fw > width || top + fh > height) {
      throw invalidImage(
        "WebP",
        `does not match its container: animation frame ${count} (${fw}x${fh} at ${left},${top}) reaches outside the ${canvas}`,
      );
    }
    const frame = image(riffChunks(f.subarray(16), `animation frame ${count}`));
    if (!frame) throw invalidImage("WebP", `has no image data in animation frame ${count}`);
    const size = webpFrameSize(frame.fourcc, frame.data);
    if (size.width !== fw || size.height !== fh) {
      throw invalidImage(
        "WebP",
        `does not match its container: animation frame ${count} declares ${fw}x${fh} but its ${frame.fourcc.trim()} data is ${size.width}x${size.height}`,
      );
    }
  }
  if (count === 0) throw invalidImage("WebP", "is marked animated but has no animation frame (ANMF)");
  return { ...base, width, height, animated };
}
