/*
 * 4:2:0 chroma upsampling ("fancy", a triangle filter) with WASM SIMD, our own, for the decoder:
 * native/jpeg/build.sh links it as libjpeg-turbo's jsimd_can_h2v2_fancy_upsample /
 * jsimd_h2v2_fancy_upsample in place of jsimd_none.c's stubs. Each output sample is 9/16 of the
 * nearest input sample, 3/16 of each of the two next nearest and 1/16 of the diagonal one: per
 * column, colsum = 3 * nearer row + further row, then
 *   left  output = (3 * colsum[c] + colsum[c - 1] + 8) >> 4
 *   right output = (3 * colsum[c] + colsum[c + 1] + 7) >> 4
 * with colsum[-1] = colsum[0] and colsum[width] = colsum[width - 1] at the edges: the arithmetic of
 * libjpeg-turbo's C version (jdsample.c), so the pixels are the same bytes (test: our 8/8 decode
 * of a 4:2:0 file equals libvips' byte for byte). Eight input columns a step, in 16-bit lanes
 * (3 * 1020 + 1020 + 8 < 65536).
 */
#include <stddef.h>
#include <stdio.h>
#include <wasm_simd128.h>
#include "jpeglib.h"

int jsimd_can_h2v2_fancy_upsample(void) { return 1; }

/* colsum of eight columns from `c`: 3 * nearer + further, each byte widened to 16 bits. */
static inline v128_t colsums(const JSAMPLE *nearer, const JSAMPLE *further, ptrdiff_t c) {
  v128_t near = wasm_u16x8_load8x8(nearer + c);
  return wasm_i16x8_add(wasm_i16x8_add(wasm_i16x8_shl(near, 1), near), wasm_u16x8_load8x8(further + c));
}

static inline int colsum(const JSAMPLE *nearer, const JSAMPLE *further, ptrdiff_t c) {
  return nearer[c] * 3 + further[c];
}

/* One output row from its nearest input row and the next nearest (above or below). */
static void upsample_row(const JSAMPLE *nearer, const JSAMPLE *further, JSAMPLE *out, ptrdiff_t width) {
  /* The first column's left neighbour is itself. */
  int here = colsum(nearer, further, 0);
  int next = width > 1 ? colsum(nearer, further, 1) : here;
  out[0] = (JSAMPLE)((here * 4 + 8) >> 4);
  out[1] = (JSAMPLE)((here * 3 + next + 7) >> 4);
  ptrdiff_t c = 1;
  const v128_t three = wasm_i16x8_splat(3), eight = wasm_i16x8_splat(8), seven = wasm_i16x8_splat(7);
  /* Columns c .. c + 7 with both neighbours inside the row: c - 1 >= 0 and c + 8 <= width - 1. */
  for (; c + 8 < width; c += 8) {
    v128_t mid = wasm_i16x8_mul(colsums(nearer, further, c), three);
    v128_t left = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(mid, colsums(nearer, further, c - 1)), eight), 4);
    v128_t right = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(mid, colsums(nearer, further, c + 1)), seven), 4);
    /* Both halves fit a byte (weights sum to 16): narrow, then weave left, right, left, right ... */
    v128_t bytes = wasm_u8x16_narrow_i16x8(left, right);
    wasm_v128_store(out + 2 * c,
                    wasm_i8x16_shuffle(bytes, bytes, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
  }
  for (; c < width; c++) {
    int last = colsum(nearer, further, c - 1), mid = colsum(nearer, further, c);
    /* The last column's right neighbour is itself. */
    int after = c + 1 < width ? colsum(nearer, further, c + 1) : mid;
    out[2 * c] = (JSAMPLE)((mid * 3 + last + 8) >> 4);
    out[2 * c + 1] = (JSAMPLE)((mid * 3 + after + 7) >> 4);
  }
}

void jsimd_h2v2_fancy_upsample(j_decompress_ptr cinfo, jpeg_component_info *compptr, JSAMPARRAY input_data,
                               JSAMPARRAY *output_data_ptr) {
  JSAMPARRAY output_data = *output_data_ptr;
  ptrdiff_t width = compptr->downsampled_width;
  /* Each input row gives two output rows: the upper weighs the row above, the lower the row below
     (libjpeg supplies those context rows). */
  for (int inrow = 0, outrow = 0; outrow < cinfo->max_v_samp_factor; inrow++) {
    upsample_row(input_data[inrow], input_data[inrow - 1], output_data[outrow++], width);
    upsample_row(input_data[inrow], input_data[inrow + 1], output_data[outrow++], width);
  }
}
