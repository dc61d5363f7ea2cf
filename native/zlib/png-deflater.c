/*
 * Our PNG encoder core over zlib-ng's deflate, for shared/vision/codecs/png/png.encode.ts: rows of
 * 8-bit RGB come in (a block at a time, into the area pd_input gives), each is converted to grey if
 * asked, given the row filter libpng's heuristic picks (of the five, the one whose bytes, read as
 * signed, sum smallest in absolute value; the first of equals), and deflated at zlib's default
 * level into an output area of at most `limit` bytes. Past that the encode stops: the PNG would
 * not fit its budget.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "zlib.h"

#define BLOCK_ROWS 32

static z_stream stream;
static int width, bpp, grey;
static unsigned stride, limit;
static uint8_t *input, *cur, *prev, *line, *output;

enum { PD_OK = 0, PD_OVER = 1, PD_NO_MEMORY = 2 };

/* The absolute value of a filtered byte read as signed: libpng's cost of one byte. */
static inline unsigned cost_of(uint8_t v) { return v < 128 ? v : 256u - v; }

static inline uint8_t paeth(uint8_t a, uint8_t b, uint8_t c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Filter f's byte at i of the current row. */
static inline uint8_t filtered(int f, unsigned i) {
  uint8_t x = cur[i], a = i >= (unsigned)bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= (unsigned)bpp ? prev[i - bpp] : 0;
  switch (f) {
    case 0: return x;
    case 1: return x - a;
    case 2: return x - b;
    case 3: return x - ((a + b) >> 1);
    default: return x - paeth(a, b, c);
  }
}

/* One loop per filter, so each is a straight loop the compiler can vectorise. */
static unsigned cost(int f) {
  unsigned sum = 0;
  switch (f) {
    case 0: for (unsigned i = 0; i < stride; i++) sum += cost_of(filtered(0, i)); break;
    case 1: for (unsigned i = 0; i < stride; i++) sum += cost_of(filtered(1, i)); break;
    case 2: for (unsigned i = 0; i < stride; i++) sum += cost_of(filtered(2, i)); break;
    case 3: for (unsigned i = 0; i < stride; i++) sum += cost_of(filtered(3, i)); break;
    default: for (unsigned i = 0; i < stride; i++) sum += cost_of(filtered(4, i)); break;
  }
  return sum;
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
  cur = malloc(stride);
  prev = calloc(stride, 1); /* above the first row is a row of zeros (PNG's rule) */
  line = malloc(stride + 1);
  output = malloc(max_bytes ? max_bytes : 1);
  memset(&stream, 0, sizeof stream);
  if (!input || !cur || !prev || !line || !output || deflateInit(&stream, Z_DEFAULT_COMPRESSION) != Z_OK)
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
    line[0] = (uint8_t)best;
    for (unsigned i = 0; i < stride; i++) line[i + 1] = filtered(best, i);
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
