/*
 * Our PNG encoder core over zlib-ng's deflate, for shared/imaging/codecs/png/png.encode.ts: rows of
 * 8-bit RGB come in (a block at a time, into the area pd_input gives), each is converted to grey if
 * asked, given the row filter libpng's heuristic picks (of the five, the one whose bytes, read as
 * signed, sum smallest in absolute value; the first of equals), and deflated at zlib's default
 * level into an output area of at most `limit` bytes. Past that the encode stops: the PNG would
 * not fit its budget.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>
#include "zlib.h"

#define BLOCK_ROWS 32

static z_stream stream;
static int width, bpp, grey;
static unsigned stride, limit;
static uint8_t *input, *cur, *prev, *line, *output;
/* The two row buffers, each with 16 zero bytes in front: a row's "left" and "upper left" bytes
 * before its first pixel read as the zeros PNG says they are, with no special case. */
static uint8_t *rows_area;

enum { PD_OK = 0, PD_OVER = 1, PD_NO_MEMORY = 2 };

/* The absolute value of a filtered byte read as signed: libpng's cost of one byte. */
static inline unsigned cost_of(uint8_t v) { return v < 128 ? v : 256u - v; }

static inline uint8_t paeth(uint8_t a, uint8_t b, uint8_t c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Filter f's byte at i of the current row. */
static inline uint8_t filtered(int f, unsigned i) {
  uint8_t x = cur[i], a = cur[(int)i - bpp], b = prev[i], c = prev[(int)i - bpp];
  switch (f) {
    case 0: return x;
    case 1: return x - a;
    case 2: return x - b;
    case 3: return x - ((a + b) >> 1);
    default: return x - paeth(a, b, c);
  }
}

/*
 * Filter f's bytes at i..i+15 of the current row, 16 at a time: the vector form of `filtered`.
 * Average's floor((a + b) / 2) is the rounding average less the low bit it rounded up; Paeth works
 * in i16 lanes (pa = |b - c|, pb = |a - c|, pc = |a + b - 2c|; ties prefer a, then b).
 */
static inline v128_t filtered16(int f, unsigned i) {
  v128_t x = wasm_v128_load(cur + i), b = wasm_v128_load(prev + i);
  if (f == 0) return x;
  v128_t a = wasm_v128_load(cur + i - bpp);
  if (f == 1) return wasm_i8x16_sub(x, a);
  if (f == 2) return wasm_i8x16_sub(x, b);
  if (f == 3) {
    v128_t floor = wasm_i8x16_sub(wasm_u8x16_avgr(a, b), wasm_v128_and(wasm_v128_xor(a, b), wasm_i8x16_splat(1)));
    return wasm_i8x16_sub(x, floor);
  }
  v128_t c = wasm_v128_load(prev + i - bpp);
  v128_t half[2];
  for (int h = 0; h < 2; h++) {
    v128_t a16 = h ? wasm_u16x8_extend_high_u8x16(a) : wasm_u16x8_extend_low_u8x16(a);
    v128_t b16 = h ? wasm_u16x8_extend_high_u8x16(b) : wasm_u16x8_extend_low_u8x16(b);
    v128_t c16 = h ? wasm_u16x8_extend_high_u8x16(c) : wasm_u16x8_extend_low_u8x16(c);
    v128_t pa = wasm_i16x8_abs(wasm_i16x8_sub(b16, c16));
    v128_t pb = wasm_i16x8_abs(wasm_i16x8_sub(a16, c16));
    v128_t pc = wasm_i16x8_abs(wasm_i16x8_sub(wasm_i16x8_add(a16, b16), wasm_i16x8_add(c16, c16)));
    v128_t use_a = wasm_v128_and(wasm_i16x8_le(pa, pb), wasm_i16x8_le(pa, pc));
    v128_t b_or_c = wasm_v128_bitselect(b16, c16, wasm_i16x8_le(pb, pc));
    half[h] = wasm_v128_bitselect(a16, b_or_c, use_a);
  }
  return wasm_i8x16_sub(x, wasm_u8x16_narrow_i16x8(half[0], half[1]));
}

/* libpng's cost of filter f on the current row: the sum of its bytes read as signed, in absolute value. */
static inline __attribute__((always_inline)) unsigned cost_with(const int f) {
  v128_t sums = wasm_i32x4_splat(0);
  unsigned i = 0;
  for (; i + 16 <= stride; i += 16) {
    /* |v| of a byte read as signed is at most 128, which i8x16.abs leaves as 0x80: 128 read as u8. */
    v128_t magnitudes = wasm_i8x16_abs(filtered16(f, i));
    sums = wasm_i32x4_add(sums, wasm_u32x4_extadd_pairwise_u16x8(wasm_u16x8_extadd_pairwise_u8x16(magnitudes)));
  }
  unsigned sum = wasm_u32x4_extract_lane(sums, 0) + wasm_u32x4_extract_lane(sums, 1) +
                 wasm_u32x4_extract_lane(sums, 2) + wasm_u32x4_extract_lane(sums, 3);
  for (; i < stride; i++) sum += cost_of(filtered(f, i));
  return sum;
}

/* One copy of the loop per filter, so none tests the filter inside it. */
static unsigned cost(int f) {
  switch (f) {
    case 0: return cost_with(0);
    case 1: return cost_with(1);
    case 2: return cost_with(2);
    case 3: return cost_with(3);
    default: return cost_with(4);
  }
}

static inline __attribute__((always_inline)) void write_with(const int f) {
  line[0] = (uint8_t)f;
  unsigned i = 0;
  for (; i + 16 <= stride; i += 16) wasm_v128_store(line + 1 + i, filtered16(f, i));
  for (; i < stride; i++) line[i + 1] = filtered(f, i);
}

/* Writes filter f's bytes of the current row after its filter-type byte in `line`. */
static void write_filtered(int f) {
  switch (f) {
    case 0: write_with(0); break;
    case 1: write_with(1); break;
    case 2: write_with(2); break;
    case 3: write_with(3); break;
    default: write_with(4); break;
  }
}

/* Deflates `n` bytes at `from`; PD_OVER when the output would pass `limit`. */
static int deflate_bytes(uint8_t *from, unsigned n, int flush) {
  stream.next_in = from;
  stream.avail_in = n;
  int status = deflate(&stream, flush);
  if (flush == Z_FINISH) return status == Z_STREAM_END ? PD_OK : PD_OVER;
  return stream.avail_in == 0 && status == Z_OK ? PD_OK : PD_OVER;
}

/*
 * Starts an image `w` pixels wide, grey (1 byte a pixel, taken from the red of grey RGB input) or
 * RGB, whose deflated rows may take at most `max_bytes`. PD_OK, or PD_NO_MEMORY.
 */
int pd_open(int w, int is_grey, unsigned max_bytes) {
  width = w;
  grey = is_grey;
  bpp = grey ? 1 : 3;
  stride = (unsigned)w * bpp;
  limit = max_bytes;
  input = malloc((size_t)w * 3 * BLOCK_ROWS);
  /* above the first row is a row of zeros (PNG's rule) */
  rows_area = calloc(2 * (16 + (size_t)stride), 1);
  cur = rows_area + 16;
  prev = rows_area + 32 + stride;
  line = malloc(stride + 1);
  output = malloc(max_bytes ? max_bytes : 1);
  memset(&stream, 0, sizeof stream);
  if (!input || !rows_area || !line || !output || deflateInit(&stream, Z_DEFAULT_COMPRESSION) != Z_OK)
    return PD_NO_MEMORY;
  stream.next_out = output;
  stream.avail_out = max_bytes;
  return PD_OK;
}

/* Where the JS side writes up to 32 rows of RGB (width * 3 bytes each) before pd_rows. */
uint8_t *pd_input(void) { return input; }

/* Filters and deflates the `rows` rows in the input area. PD_OK, or PD_OVER (then stop). */
int pd_rows(int rows) {
  for (int r = 0; r < rows; r++) {
    const uint8_t *rgb = input + (size_t)r * width * 3;
    if (grey)
      for (int x = 0; x < width; x++) cur[x] = rgb[x * 3];
    else
      memcpy(cur, rgb, stride);
    int best = 0;
    unsigned best_cost = cost(0);
    for (int f = 1; f < 5 && best_cost > 0; f++) {
      unsigned c = cost(f);
      if (c < best_cost) {
        best_cost = c;
        best = f;
      }
    }
    write_filtered(best);
    if (deflate_bytes(line, stride + 1, Z_NO_FLUSH) != PD_OK) return PD_OVER;
    uint8_t *t = prev;
    prev = cur;
    cur = t;
  }
  return PD_OK;
}

/* Ends the stream. PD_OK (the zlib stream is pd_length() bytes at pd_output()), or PD_OVER. */
int pd_finish(void) { return deflate_bytes(line, 0, Z_FINISH); }

uint8_t *pd_output(void) { return output; }

unsigned pd_length(void) { return limit - stream.avail_out; }
