/*
 * Our row-streaming JPEG decoder over libjpeg-turbo's decompression API, built to WASM by
 * native/jpeg/build.sh. One instance decodes one image: JS (shared/imaging/codecs/jpeg/jpeg.decode.ts)
 * hands the file over 64 KB at a time as libjpeg asks for it (the imported `jpeg_read`), so the file
 * is never copied whole into this memory; it reads the header, starts the decode at n/8 and pulls
 * rows a band at a time, so the decoded frame is never held whole either (a progressive file keeps
 * its coefficients, as libjpeg must). A fatal error calls the imported `jpeg_fail`, which
 * throws in JS and abandons the instance (no setjmp in WASM); a warning (data cut short, a corrupt
 * segment) is counted and the caller refuses the image once the decode ends, as TurboJPEG does.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "jpeglib.h"
#include "jerror.h"

/* Throws in JS; `out_of_memory` tells a failed allocation from broken data. */
__attribute__((import_module("env"), import_name("jpeg_fail"))) _Noreturn void jpeg_fail(int out_of_memory);
/* Copies the file's next bytes (at most `room`) to `into`; returns how many, 0 at its end. */
__attribute__((import_module("env"), import_name("jpeg_read"))) int jpeg_read(unsigned char *into, int room);

#define SOURCE_CHUNK 65536
static unsigned char chunk[SOURCE_CHUNK];
static const JOCTET FAKE_EOI[2] = {0xFF, JPEG_EOI};
static struct jpeg_source_mgr source;

static void on_init_source(j_decompress_ptr cinfo) { (void)cinfo; }

/* The next chunk of the file; past its end, a warning and a fake EOI, as libjpeg's own sources do. */
static boolean on_fill_input_buffer(j_decompress_ptr cinfo) {
  int got = jpeg_read(chunk, SOURCE_CHUNK);
  if (got <= 0) {
    WARNMS(cinfo, JWRN_JPEG_EOF);
    source.next_input_byte = FAKE_EOI;
    source.bytes_in_buffer = 2;
  } else {
    source.next_input_byte = chunk;
    source.bytes_in_buffer = (size_t)got;
  }
  return TRUE;
}

static void on_skip_input_data(j_decompress_ptr cinfo, long count) {
  if (count <= 0) return;
  while (count > (long)source.bytes_in_buffer) {
    count -= (long)source.bytes_in_buffer;
    on_fill_input_buffer(cinfo);
  }
  source.next_input_byte += count;
  source.bytes_in_buffer -= (size_t)count;
}

static void on_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static struct jpeg_decompress_struct decoder;
static struct jpeg_error_mgr errors;

static void on_error_exit(j_common_ptr cinfo) { jpeg_fail(cinfo->err->msg_code == JERR_OUT_OF_MEMORY); }

static void on_emit_message(j_common_ptr cinfo, int level) {
  if (level < 0) cinfo->err->num_warnings++;
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_format_message(j_common_ptr cinfo, char *buffer) {
  (void)cinfo;
  buffer[0] = 0;
}

static void on_reset(j_common_ptr cinfo) {
  cinfo->err->num_warnings = 0;
  cinfo->err->msg_code = 0;
}

/*
 * Reads the header of the file `jpeg_read` hands over. Writes width, height, component count and
 * libjpeg's colour space (J_COLOR_SPACE) to `out[0..3]`. Returns the warnings so far.
 */
__attribute__((export_name("jd_header"))) long jd_header(int *out) {
  errors.error_exit = on_error_exit;
  errors.emit_message = on_emit_message;
  errors.output_message = on_output_message;
  errors.format_message = on_format_message;
  errors.reset_error_mgr = on_reset;
  errors.trace_level = 0;
  errors.num_warnings = 0;
  errors.msg_code = 0;
  decoder.err = &errors;
  jpeg_create_decompress(&decoder);
  source.init_source = on_init_source;
  source.fill_input_buffer = on_fill_input_buffer;
  source.skip_input_data = on_skip_input_data;
  source.resync_to_restart = jpeg_resync_to_restart;
  source.term_source = on_term_source;
  source.bytes_in_buffer = 0;
  source.next_input_byte = NULL;
  decoder.src = &source;
  jpeg_read_header(&decoder, TRUE);
  out[0] = (int)decoder.image_width;
  out[1] = (int)decoder.image_height;
  out[2] = decoder.num_components;
  out[3] = (int)decoder.jpeg_color_space;
  return errors.num_warnings;
}

/*
 * Starts the decode at `eighths`/8 of the full size, to RGB (`cmyk` 0) or to CMYK as stored (1:
 * libjpeg does not convert CMYK/YCCK to RGB). Writes the output width, height and the rows a read
 * may return at once to `out[0..2]`. ISLOW IDCT and fancy upsampling, as TurboJPEG's defaults.
 */
__attribute__((export_name("jd_start"))) long jd_start(int eighths, int cmyk, int *out) {
  decoder.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  decoder.scale_num = (unsigned int)eighths;
  decoder.scale_denom = 8;
  decoder.dct_method = JDCT_ISLOW;
  decoder.do_fancy_upsampling = TRUE;
  jpeg_start_decompress(&decoder);
  out[0] = (int)decoder.output_width;
  out[1] = (int)decoder.output_height;
  out[2] = decoder.rec_outbuf_height;
  return errors.num_warnings;
}

/*
 * Decodes up to `count` rows into `rows` (each output_width x components bytes); returns how many
 * (0 only if libjpeg gave none, which the caller refuses rather than asking again).
 */
__attribute__((export_name("jd_read"))) int jd_read(unsigned char *rows, int count) {
  static JSAMPROW pointers[16];
  size_t stride = (size_t)decoder.output_width * (size_t)decoder.output_components;
  int done = 0;
  while (done < count && decoder.output_scanline < decoder.output_height) {
    int band = count - done > 16 ? 16 : count - done;
    for (int i = 0; i < band; i++) pointers[i] = rows + (size_t)(done + i) * stride;
    JDIMENSION got = jpeg_read_scanlines(&decoder, pointers, (JDIMENSION)band);
    if (got == 0) break;
    done += (int)got;
  }
  return done;
}

/* Ends a decode whose rows were all read (reading to EOI); returns the warnings of the whole decode. */
__attribute__((export_name("jd_finish"))) long jd_finish(void) {
  jpeg_finish_decompress(&decoder);
  return errors.num_warnings;
}

/*
 * Entropy-decodes every coefficient without any inverse DCT, to EOI: how an image embedded
 * unchanged is verified. Returns the warnings of the whole read.
 */
__attribute__((export_name("jd_verify"))) long jd_verify(void) {
  jpeg_read_coefficients(&decoder);
  jpeg_finish_decompress(&decoder);
  return errors.num_warnings;
}
