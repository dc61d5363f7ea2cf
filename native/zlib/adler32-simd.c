/*
 * Adler-32 with WASM SIMD, our own, in place of zlib-ng's generic `adler32_c` (build.sh leaves
 * arch/generic/adler32_c.c out and links this one under its name, so zlib-ng's function table
 * picks it for every checksum: the inflater's check of a PNG's data and the deflater's trailer).
 * zlib-ng has SIMD versions for x86, ARM, POWER and s390 only; the generic loop took 18 ms of the
 * 5K screenshot's 44 MB inflate, more than the inflate itself (docs/benchmarks.md).
 *
 * Adler-32 of bytes d[0..n-1] from sums (a, b): a' = a + sum d[i], b' = b + n a + sum (n - i) d[i],
 * both modulo 65521. A block of 16-byte chunks keeps three vectors: the byte sums, the running sum of
 * the byte sums before each chunk (which the 16 a term of every later chunk needs) and each chunk's
 * weighted sum (weights 16 down to 1); they are folded into a and b once a block, in 64 bits.
 */
#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>
#include "zbuild.h"

#define MOD_ADLER 65521u
/* Chunks a block: small enough that no 32-bit lane can overflow (the prefix lanes are the largest). */
#define BLOCK_CHUNKS 512

static inline uint32_t lanes_total(v128_t v) {
  return wasm_u32x4_extract_lane(v, 0) + wasm_u32x4_extract_lane(v, 1) + wasm_u32x4_extract_lane(v, 2) +
         wasm_u32x4_extract_lane(v, 3);
}

/* The chunk's byte weights, 16 down to 1, and ones (the plain byte sums). Read through a volatile
 * pointer once a call: clang would emit each vector constant inside the loop (a v128.const is cheap
 * in WASM), and V8 15's optimising tier (workerd's, Deno's) builds such a constant with four
 * instructions at every use (docs/vision-decisions.md, "Constants out of the loops"). */
static _Alignas(16) const int16_t LANES[24] = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
                                               1,  1,  1,  1,  1,  1,  1,  1};

Z_INTERNAL uint32_t adler32_c(uint32_t adler, const uint8_t *buf, size_t len) {
  if (buf == NULL) return 1; /* zlib's convention: the checksum of nothing */
  uint32_t a = adler & 0xffff, b = adler >> 16;
  const v128_t weights_high = *(volatile const v128_t *)&LANES[0];
  const v128_t weights_low = *(volatile const v128_t *)&LANES[8];
  const v128_t ones = *(volatile const v128_t *)&LANES[16];
  while (len >= 16) {
    size_t chunks = len / 16 < BLOCK_CHUNKS ? len / 16 : BLOCK_CHUNKS;
    v128_t sums = wasm_i32x4_splat(0), prefix = wasm_i32x4_splat(0), weighted = wasm_i32x4_splat(0);
    for (size_t k = 0; k < chunks; k++, buf += 16) {
      v128_t d = wasm_v128_load(buf);
      v128_t low = wasm_u16x8_extend_low_u8x16(d), high = wasm_u16x8_extend_high_u8x16(d);
      prefix = wasm_i32x4_add(prefix, sums);
      /* Each lane gains 4 bytes a chunk either way; only the lanes' total is used. */
      sums = wasm_i32x4_add(sums, wasm_i32x4_add(wasm_i32x4_dot_i16x8(low, ones), wasm_i32x4_dot_i16x8(high, ones)));
      weighted = wasm_i32x4_add(weighted, wasm_i32x4_dot_i16x8(low, weights_high));
      weighted = wasm_i32x4_add(weighted, wasm_i32x4_dot_i16x8(high, weights_low));
    }
    uint64_t n = (uint64_t)chunks * 16;
    uint64_t b64 = (uint64_t)b + n * a + 16 * (uint64_t)lanes_total(prefix) + lanes_total(weighted);
    a = (uint32_t)(((uint64_t)a + lanes_total(sums)) % MOD_ADLER);
    b = (uint32_t)(b64 % MOD_ADLER);
    len -= n;
  }
  for (; len; len--, buf++) {
    a += *buf;
    if (a >= MOD_ADLER) a -= MOD_ADLER;
    b += a;
    if (b >= MOD_ADLER) b -= MOD_ADLER;
  }
  return a | (b << 16);
}
