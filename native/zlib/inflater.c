/*
 * Our glue over zlib-ng's inflate (zlib-compatible API) for shared/imaging/codecs/png/png.inflate.ts:
 * one zlib stream per instance, inflated from an input area into an output area the JS side
 * allocates with malloc; after each call the JS side reads how many bytes moved each way.
 */
#include <string.h>
#include "zlib.h"

static z_stream stream;
static unsigned consumed, produced;

/* Starts the stream; zlib's status (Z_OK, or Z_MEM_ERROR when its state cannot be allocated). */
int zi_open(void) {
  memset(&stream, 0, sizeof stream);
  return inflateInit(&stream);
}

/*
 * Inflates from in[0..in_len) into out[0..out_len) until either runs out or the stream ends;
 * zlib's status: Z_OK, Z_STREAM_END, Z_BUF_ERROR (no progress was possible) or an error below 0.
 */
int zi_run(unsigned char *in, unsigned in_len, unsigned char *out, unsigned out_len) {
  stream.next_in = in;
  stream.avail_in = in_len;
  stream.next_out = out;
  stream.avail_out = out_len;
  int status = inflate(&stream, Z_NO_FLUSH);
  consumed = in_len - stream.avail_in;
  produced = out_len - stream.avail_out;
  return status;
}

/* Input bytes the last zi_run took. */
unsigned zi_consumed(void) { return consumed; }

/* Output bytes the last zi_run wrote. */
unsigned zi_produced(void) { return produced; }
