/*
 * Our WebP decoder over libwebp's decoding API, built to WASM by native/webp/build.sh. One instance
 * decodes one image: JS (shared/imaging/codecs/webp/webp.decode.ts) copies the bytes in, reads the
 * features, and decodes the first frame scaled by libwebp while decoding (its area-averaging
 * rescaler), so the output is never larger than a few times the fit's target. A lossy frame is
 * decoded macroblock row by macroblock row; a lossless one holds its ARGB (4 bytes a pixel), as
 * VP8L's backward references need. An animation's first frame comes through libwebp's demuxer.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "src/webp/decode.h"
#include "src/webp/demux.h"

/*
 * Reads what the decode needs of the `length` bytes at `source` into `out[0..10]`: canvas width and
 * height, has alpha, is animated, then the first frame's payload offset and size within `source`,
 * its x and y offset on the canvas, its width and height (the whole file and canvas for a still),
 * and its format (1 lossy, 2 lossless, 0 mixed: libwebp's WebPBitstreamFeatures.format).
 * Returns 0, or libwebp's status (VP8StatusCode) / -1 when the demuxer refuses the file.
 */
__attribute__((export_name("wd_info"))) int wd_info(const uint8_t *source, size_t length, int *out) {
  WebPBitstreamFeatures features;
  VP8StatusCode status = WebPGetFeatures(source, length, &features);
  if (status != VP8_STATUS_OK) return (int)status;
  out[0] = features.width;
  out[1] = features.height;
  out[2] = features.has_alpha;
  out[3] = features.has_animation;
  out[4] = 0;
  out[5] = (int)length;
  out[6] = 0;
  out[7] = 0;
  out[8] = features.width;
  out[9] = features.height;
  out[10] = features.format;
  if (!features.has_animation) return 0;
  WebPData data = {source, length};
  WebPDemuxer *demux = WebPDemux(&data);
  if (demux == NULL) return -1;
  WebPIterator frame;
  if (!WebPDemuxGetFrame(demux, 1, &frame)) {
    WebPDemuxDelete(demux);
    return -1;
  }
  out[4] = (int)(frame.fragment.bytes - source);
  out[5] = (int)frame.fragment.size;
  out[6] = frame.x_offset;
  out[7] = frame.y_offset;
  out[8] = frame.width;
  out[9] = frame.height;
  out[2] = frame.has_alpha;
  WebPBitstreamFeatures first;
  out[10] = WebPGetFeatures(frame.fragment.bytes, frame.fragment.size, &first) == VP8_STATUS_OK ? first.format : 0;
  WebPDemuxReleaseIterator(&frame);
  WebPDemuxDelete(demux);
  return 0;
}

/*
 * Decodes the `length` bytes at `source` (a still file, or an animation frame's payload) scaled to
 * `width` x `height`, as RGBA (`alpha` 1) or RGB, into `pixels` (`stride` bytes a row, `size` in
 * all). Returns 0 or libwebp's status (VP8StatusCode).
 */
__attribute__((export_name("wd_decode"))) int wd_decode(const uint8_t *source, size_t length, int width, int height,
                                                        int alpha, uint8_t *pixels, int stride, size_t size) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return -1;
  WebPBitstreamFeatures features;
  VP8StatusCode status = WebPGetFeatures(source, length, &features);
  if (status != VP8_STATUS_OK) return (int)status;
  if (width != features.width || height != features.height) {
    config.options.use_scaling = 1;
    config.options.scaled_width = width;
    config.options.scaled_height = height;
  }
  config.output.colorspace = alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = pixels;
  config.output.u.RGBA.stride = stride;
  config.output.u.RGBA.size = size;
  status = WebPDecode(source, length, &config);
  WebPFreeDecBuffer(&config.output);
  return (int)status;
}
