/**
 * The codecs by format: the one place a media type chooses code. Adding a format is its codec
 * folder, its header reader in shared/media, and a line here.
 */
import type { ImageHeader } from "../../media/image-header";
import type { Codec } from "./codec";
import { gifCodec } from "./gif/gif.codec";
import { jpegCodec } from "./jpeg/jpeg.codec";
import { pngCodec } from "./png/png.codec";
import { webpCodec } from "./webp/webp.codec";

/** The codec that decodes the image `header` describes. */
export function codecFor(header: ImageHeader): Codec {
  switch (header.mediaType) {
    case "image/jpeg":
      return jpegCodec;
    case "image/png":
      return pngCodec;
    case "image/gif":
      return gifCodec;
    case "image/webp":
      return webpCodec;
  }
}
