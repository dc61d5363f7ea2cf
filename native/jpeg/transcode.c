/*
 * Test-only: rewrites a Huffman-coded JPEG as an arithmetic-coded one (sequential SOF9 or
 * progressive SOF10) without decoding its pixels, by libjpeg-turbo's transcoding API (what
 * `jpegtran -arithmetic` does). No installed tool writes arithmetic coding; the tests build their
 * fixtures with this (test/fixtures/jpeg-arith.wasm, built by native/jpeg/build.sh).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "jpeglib.h"

__attribute__((import_module("env"), import_name("jpeg_fail"))) _Noreturn void jpeg_fail(int code);

static void on_error_exit(j_common_ptr cinfo) { jpeg_fail(cinfo->err->msg_code); }
static void on_emit_message(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }
static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }
static void on_format_message(j_common_ptr cinfo, char *buffer) {
  (void)cinfo;
  buffer[0] = 0;
}
static void on_reset(j_common_ptr cinfo) { cinfo->err->msg_code = 0; }

static void init_errors(struct jpeg_error_mgr *errors) {
  errors->error_exit = on_error_exit;
  errors->emit_message = on_emit_message;
  errors->output_message = on_output_message;
  errors->format_message = on_format_message;
  errors->reset_error_mgr = on_reset;
  errors->trace_level = 0;
  errors->num_warnings = 0;
  errors->msg_code = 0;
}

/*
 * Transcodes the `length` bytes at `source`; `progressive` 1 writes a progressive scan script.
 * Writes the output's address and length to `out[0..1]` (malloc'd, the caller frees).
 */
__attribute__((export_name("to_arithmetic"))) void to_arithmetic(const unsigned char *source, unsigned long length,
                                                                 int progressive, unsigned long *out) {
  static struct jpeg_decompress_struct input;
  static struct jpeg_compress_struct output;
  static struct jpeg_error_mgr input_errors, output_errors;
  init_errors(&input_errors);
  init_errors(&output_errors);
  input.err = &input_errors;
  output.err = &output_errors;
  jpeg_create_decompress(&input);
  jpeg_create_compress(&output);
  jpeg_mem_src(&input, source, length);
  jpeg_read_header(&input, TRUE);
  jvirt_barray_ptr *coefficients = jpeg_read_coefficients(&input);
  jpeg_copy_critical_parameters(&input, &output);
  output.arith_code = TRUE;
  output.optimize_coding = FALSE;
  if (progressive) jpeg_simple_progression(&output);
  unsigned char *buffer = NULL;
  unsigned long size = 0;
  jpeg_mem_dest(&output, &buffer, &size);
  jpeg_write_coefficients(&output, coefficients);
  jpeg_finish_compress(&output);
  jpeg_finish_decompress(&input);
  out[0] = (unsigned long)buffer;
  out[1] = size;
}
