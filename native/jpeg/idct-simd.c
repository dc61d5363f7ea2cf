/*
 * libjpeg-turbo's accurate integer inverse DCTs with WASM SIMD, our own, for the decoder: the 8x8
 * one every full-size decode runs (jidctint.c's jpeg_idct_islow) and the scaled ones of a decode at
 * 7/8 to 4/8 (jidctint.c's 7x7, 6x6 and 5x5, jidctred.c's 4x4). native/jpeg/build.sh links them in
 * place of the C ones, which are scalar in every libjpeg-turbo build but the 8x8 one, and that is
 * SIMD only in its native builds: the inverse DCT was the largest item of a scaled decode after the
 * Huffman decode (docs/vision-decisions.md, "The inverse DCT in WASM SIMD").
 *
 * Four columns (pass 1) or four rows (pass 2) a vector, in 32-bit lanes, with the C code's
 * arithmetic term for term. On wasm32 its JLONG is 32 bits, so its sums wrap as the lanes' do;
 * the 8x8 and 4x4 zero-AC shortcuts are kept lane by lane (they differ from the full path only
 * where a shift overflows); and the range limit is the table's: the descaled value's low 10 bits,
 * sign-extended, plus 128, clamped to 0..255. So the pixels are the same bytes (test: every n/8
 * decode equals libjpeg-turbo's C build's byte for byte).
 */
#define JPEG_INTERNALS
#include <stdint.h>
#include <wasm_simd128.h>
#include "jinclude.h"
#include "jpeglib.h"
#include "jdct.h"
#include "jsimd.h"

#define CONST_BITS 13
#define PASS1_BITS 2
#undef FIX
#define FIX(x) ((int32_t)((x) * (1 << CONST_BITS) + 0.5))

_Static_assert(sizeof(ISLOW_MULT_TYPE) == 4, "the dequantisation loads four 32-bit multipliers");

typedef v128_t vec;

static inline vec add(vec a, vec b) { return wasm_i32x4_add(a, b); }
static inline vec sub(vec a, vec b) { return wasm_i32x4_sub(a, b); }
static inline vec mul(vec a, int32_t k) { return wasm_i32x4_mul(a, wasm_i32x4_splat(k)); }
static inline vec shl(vec a, int n) { return wasm_i32x4_shl(a, n); }
static inline vec shr(vec a, int n) { return wasm_i32x4_shr(a, n); }

/* The two passes' descaling: pass 1 keeps PASS1_BITS of fraction, pass 2 drops them and the 8. */
#define PASS1_SHIFT (CONST_BITS - PASS1_BITS)
#define PASS2_SHIFT (CONST_BITS + PASS1_BITS + 3)

/*
 * The one-dimensional kernels: x[k] is frequency k, y[i] sample i, descaled by `shift` with
 * rounding (the C code adds 1 << (shift - 1) to the DC term, before or after its shift: the same
 * sum modulo 2^32).
 */
static inline void islow_1d(const vec x[8], int shift, vec y[8]) {
  vec fudge = wasm_i32x4_splat(1 << (shift - 1));
  /* Even part: the rotator is sqrt(2) c6. */
  vec z1 = mul(add(x[2], x[6]), FIX(0.541196100));
  vec tmp2 = add(z1, mul(x[6], -FIX(1.847759065)));
  vec tmp3 = add(z1, mul(x[2], FIX(0.765366865)));
  vec tmp0 = add(shl(add(x[0], x[4]), CONST_BITS), fudge);
  vec tmp1 = add(shl(sub(x[0], x[4]), CONST_BITS), fudge);
  vec tmp10 = add(tmp0, tmp3), tmp13 = sub(tmp0, tmp3);
  vec tmp11 = add(tmp1, tmp2), tmp12 = sub(tmp1, tmp2);
  /* Odd part: i0..i3 are y7, y5, y3, y1. */
  vec i0 = x[7], i1 = x[5], i2 = x[3], i3 = x[1];
  vec za = add(i0, i3), zb = add(i1, i2), zc = add(i0, i2), zd = add(i1, i3);
  vec z5 = mul(add(zc, zd), FIX(1.175875602));
  za = mul(za, -FIX(0.899976223));
  zb = mul(zb, -FIX(2.562915447));
  zc = add(mul(zc, -FIX(1.961570560)), z5);
  zd = add(mul(zd, -FIX(0.390180644)), z5);
  i0 = add(mul(i0, FIX(0.298631336)), add(za, zc));
  i1 = add(mul(i1, FIX(2.053119869)), add(zb, zd));
  i2 = add(mul(i2, FIX(3.072711026)), add(zb, zc));
  i3 = add(mul(i3, FIX(1.501321110)), add(za, zd));
  y[0] = shr(add(tmp10, i3), shift);
  y[7] = shr(sub(tmp10, i3), shift);
  y[1] = shr(add(tmp11, i2), shift);
  y[6] = shr(sub(tmp11, i2), shift);
  y[2] = shr(add(tmp12, i1), shift);
  y[5] = shr(sub(tmp12, i1), shift);
  y[3] = shr(add(tmp13, i0), shift);
  y[4] = shr(sub(tmp13, i0), shift);
}

/* cK is sqrt(2) cos(K pi / 14). */
static inline void idct7_1d(const vec x[8], int shift, vec y[8]) {
  vec tmp13 = add(shl(x[0], CONST_BITS), wasm_i32x4_splat(1 << (shift - 1)));
  vec z1 = x[2], z2 = x[4], z3 = x[6];
  vec tmp10 = mul(sub(z2, z3), FIX(0.881747734));                      /* c4 */
  vec tmp12 = mul(sub(z1, z2), FIX(0.314692123));                      /* c6 */
  vec tmp11 = sub(add(add(tmp10, tmp12), tmp13), mul(z2, FIX(1.841218003))); /* c2+c4-c6 */
  vec tmp0 = add(z1, z3);
  z2 = sub(z2, tmp0);
  tmp0 = add(mul(tmp0, FIX(1.274162392)), tmp13);                      /* c2 */
  tmp10 = add(tmp10, sub(tmp0, mul(z3, FIX(0.077722536))));            /* c2-c4-c6 */
  tmp12 = add(tmp12, sub(tmp0, mul(z1, FIX(2.470602249))));            /* c2+c4+c6 */
  tmp13 = add(tmp13, mul(z2, FIX(1.414213562)));                       /* c0 */
  z1 = x[1], z2 = x[3], z3 = x[5];
  vec tmp1 = mul(add(z1, z2), FIX(0.935414347));                       /* (c3+c1-c5)/2 */
  vec tmp2 = mul(sub(z1, z2), FIX(0.170262339));                       /* (c3+c5-c1)/2 */
  tmp0 = sub(tmp1, tmp2);
  tmp1 = add(tmp1, tmp2);
  tmp2 = mul(add(z2, z3), -FIX(1.378756276));                          /* -c1 */
  tmp1 = add(tmp1, tmp2);
  z2 = mul(add(z1, z3), FIX(0.613604268));                             /* c5 */
  tmp0 = add(tmp0, z2);
  tmp2 = add(tmp2, add(z2, mul(z3, FIX(1.870828693))));                /* c3+c1-c5 */
  y[0] = shr(add(tmp10, tmp0), shift);
  y[6] = shr(sub(tmp10, tmp0), shift);
  y[1] = shr(add(tmp11, tmp1), shift);
  y[5] = shr(sub(tmp11, tmp1), shift);
  y[2] = shr(add(tmp12, tmp2), shift);
  y[4] = shr(sub(tmp12, tmp2), shift);
  y[3] = shr(tmp13, shift);
}

/*
 * cK is sqrt(2) cos(K pi / 12). Pass 1 descales two outputs early and scales the z1 - z2 - z3
 * term by PASS1_BITS instead of CONST_BITS, as the C code does.
 */
static inline void idct6_1d(const vec x[8], int shift, vec y[8]) {
  int first = shift == PASS1_SHIFT;
  vec tmp0 = add(shl(x[0], CONST_BITS), wasm_i32x4_splat(1 << (shift - 1)));
  vec tmp10 = mul(x[4], FIX(0.707106781));                             /* c4 */
  vec tmp1 = add(tmp0, tmp10);
  vec tmp11 = sub(sub(tmp0, tmp10), tmp10);
  if (first) tmp11 = shr(tmp11, shift);
  tmp0 = mul(x[2], FIX(1.224744871));                                  /* c2 */
  tmp10 = add(tmp1, tmp0);
  vec tmp12 = sub(tmp1, tmp0);
  vec z1 = x[1], z2 = x[3], z3 = x[5];
  tmp1 = mul(add(z1, z3), FIX(0.366025404));                           /* c5 */
  tmp0 = add(tmp1, shl(add(z1, z2), CONST_BITS));
  vec tmp2 = add(tmp1, shl(sub(z3, z2), CONST_BITS));
  tmp1 = shl(sub(sub(z1, z2), z3), first ? PASS1_BITS : CONST_BITS);
  y[0] = shr(add(tmp10, tmp0), shift);
  y[5] = shr(sub(tmp10, tmp0), shift);
  y[1] = first ? add(tmp11, tmp1) : shr(add(tmp11, tmp1), shift);
  y[4] = first ? sub(tmp11, tmp1) : shr(sub(tmp11, tmp1), shift);
  y[2] = shr(add(tmp12, tmp2), shift);
  y[3] = shr(sub(tmp12, tmp2), shift);
}

/* cK is sqrt(2) cos(K pi / 10). */
static inline void idct5_1d(const vec x[8], int shift, vec y[8]) {
  vec tmp12 = add(shl(x[0], CONST_BITS), wasm_i32x4_splat(1 << (shift - 1)));
  vec z1 = mul(add(x[2], x[4]), FIX(0.790569415));                     /* (c2+c4)/2 */
  vec z2 = mul(sub(x[2], x[4]), FIX(0.353553391));                     /* (c2-c4)/2 */
  vec z3 = add(tmp12, z2);
  vec tmp10 = add(z3, z1), tmp11 = sub(z3, z1);
  tmp12 = sub(tmp12, shl(z2, 2));
  z1 = mul(add(x[1], x[3]), FIX(0.831253876));                         /* c3 */
  vec tmp0 = add(z1, mul(x[1], FIX(0.513743148)));                     /* c1-c3 */
  vec tmp1 = sub(z1, mul(x[3], FIX(2.176250899)));                     /* c1+c3 */
  y[0] = shr(add(tmp10, tmp0), shift);
  y[4] = shr(sub(tmp10, tmp0), shift);
  y[1] = shr(add(tmp11, tmp1), shift);
  y[3] = shr(sub(tmp11, tmp1), shift);
  y[2] = shr(tmp12, shift);
}

/* jidctred.c's 4-point kernel on the 8 inputs but x[4]; one more bit of scale in both passes. */
static inline void idct4_1d(const vec x[8], int shift, vec y[8]) {
  shift += 1;
  vec tmp0 = add(shl(x[0], CONST_BITS + 1), wasm_i32x4_splat(1 << (shift - 1)));
  vec tmp2 = add(mul(x[2], FIX(1.847759065)), mul(x[6], -FIX(0.765366865)));
  vec tmp10 = add(tmp0, tmp2), tmp12 = sub(tmp0, tmp2);
  vec z1 = x[7], z2 = x[5], z3 = x[3], z4 = x[1];
  tmp0 = add(add(mul(z1, -FIX(0.211164243)), mul(z2, FIX(1.451774981))),
             add(mul(z3, -FIX(2.172734803)), mul(z4, FIX(1.061594337))));
  tmp2 = add(add(mul(z1, -FIX(0.509795579)), mul(z2, -FIX(0.601344887))),
             add(mul(z3, FIX(0.899976223)), mul(z4, FIX(2.562915447))));
  y[0] = shr(add(tmp10, tmp2), shift);
  y[3] = shr(sub(tmp10, tmp2), shift);
  y[1] = shr(add(tmp12, tmp0), shift);
  y[2] = shr(sub(tmp12, tmp0), shift);
}

static inline __attribute__((always_inline)) void kernel(int n, const vec x[8], int shift, vec y[8]) {
  switch (n) {
    case 8: islow_1d(x, shift, y); break;
    case 7: idct7_1d(x, shift, y); break;
    case 6: idct6_1d(x, shift, y); break;
    case 5: idct5_1d(x, shift, y); break;
    default: idct4_1d(x, shift, y); break;
  }
}

/* Whether lane's inputs but x[0] are zero (the 4x4 does not read x[4]): the C code's shortcut. */
static inline __attribute__((always_inline)) vec ac_zero(int n, const vec x[8]) {
  vec any = wasm_i32x4_splat(0);
  for (int k = 1; k < 8; k++)
    if (!(n == 4 && k == 4)) any = wasm_v128_or(any, x[k]);
  return wasm_i32x4_eq(any, wasm_i32x4_splat(0));
}

static inline void transpose4(vec *a, vec *b, vec *c, vec *d) {
  vec ab_lo = wasm_i32x4_shuffle(*a, *b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(*a, *b, 2, 6, 3, 7);
  vec cd_lo = wasm_i32x4_shuffle(*c, *d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(*c, *d, 2, 6, 3, 7);
  *a = wasm_i32x4_shuffle(ab_lo, cd_lo, 0, 1, 4, 5);
  *b = wasm_i32x4_shuffle(ab_lo, cd_lo, 2, 3, 6, 7);
  *c = wasm_i32x4_shuffle(ab_hi, cd_hi, 0, 1, 4, 5);
  *d = wasm_i32x4_shuffle(ab_hi, cd_hi, 2, 3, 6, 7);
}

/* range_limit[v & RANGE_MASK] before the clamp: the low 10 bits sign-extended, plus CENTERJSAMPLE. */
static inline vec centred(vec v) {
  return wasm_i32x4_sub(wasm_v128_and(wasm_i32x4_add(v, wasm_i32x4_splat(512)), wasm_i32x4_splat(1023)),
                        wasm_i32x4_splat(512 - CENTERJSAMPLE));
}

/* The first n bytes of `bytes` to `out` (n = 4 .. 8), no further: the next block's columns follow. */
static inline __attribute__((always_inline)) void store_row(JSAMPLE *out, vec bytes, int n) {
  if (n == 8) {
    wasm_v128_store64_lane(out, bytes, 0);
    return;
  }
  wasm_v128_store32_lane(out, bytes, 0);
  if (n >= 6) wasm_v128_store16_lane(out + 4, bytes, 2);
  if (n == 5) wasm_v128_store8_lane(out + 4, bytes, 4);
  if (n == 7) wasm_v128_store8_lane(out + 6, bytes, 6);
}

/* The n x n inverse DCT of one block (n = 8, 7, 6, 5 or 4), as libjpeg-turbo's C does it. */
static inline __attribute__((always_inline)) void idct(int n, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                                      JSAMPARRAY output_buf, JDIMENSION output_col) {
  const ISLOW_MULT_TYPE *quant = (const ISLOW_MULT_TYPE *)compptr->dct_table;
  const vec zero = wasm_i32x4_splat(0);
  int shortcut = n == 8 || n == 4;
  /* The 4x4 reads all eight frequencies but the fifth; the others the first n. */
  int frequencies = n == 4 ? 8 : n;
  /* Pass 1, four columns a vector: ws[r][h] is sample row r of columns 4h .. 4h + 3. */
  vec ws[8][2];
  for (int h = 0; h < 2; h++) {
    vec x[8], coef[8], y[8];
    for (int k = 0; k < 8; k++) {
      coef[k] = k < frequencies ? wasm_i32x4_load16x4(coef_block + DCTSIZE * k + 4 * h) : zero;
      x[k] = k < frequencies ? wasm_i32x4_mul(coef[k], wasm_v128_load(quant + DCTSIZE * k + 4 * h)) : zero;
    }
    kernel(n, x, PASS1_SHIFT, y);
    /* A column whose AC coefficients are all zero is its DC, scaled (tested on the coefficients). */
    vec flat = shortcut ? ac_zero(n, coef) : zero;
    for (int r = 0; r < 8; r++)
      ws[r][h] = r >= n ? zero : shortcut ? wasm_v128_bitselect(shl(x[0], PASS1_BITS), y[r], flat) : y[r];
  }
  /* Pass 2, four rows a vector: rows 4g .. 4g + 3. */
  for (int g = 0; g < (n > 4 ? 2 : 1); g++) {
    vec x[8], y[8];
    for (int h = 0; h < 2; h++) {
      x[4 * h] = ws[4 * g][h], x[4 * h + 1] = ws[4 * g + 1][h];
      x[4 * h + 2] = ws[4 * g + 2][h], x[4 * h + 3] = ws[4 * g + 3][h];
      transpose4(&x[4 * h], &x[4 * h + 1], &x[4 * h + 2], &x[4 * h + 3]);
    }
    for (int i = 0; i < 8; i++) y[i] = zero;
    kernel(n, x, PASS2_SHIFT, y);
    vec flat = shortcut ? ac_zero(n, x) : zero;
    vec dc = shr(add(x[0], wasm_i32x4_splat(1 << (PASS1_BITS + 2))), PASS1_BITS + 3);
    for (int i = 0; i < n; i++) y[i] = centred(shortcut ? wasm_v128_bitselect(dc, y[i], flat) : y[i]);
    /* Back to rows: y[i] holds column i of the four rows. */
    transpose4(&y[0], &y[1], &y[2], &y[3]);
    transpose4(&y[4], &y[5], &y[6], &y[7]);
    for (int j = 0; j < 4 && 4 * g + j < n; j++) {
      vec words = wasm_i16x8_narrow_i32x4(y[j], y[4 + j]);
      store_row(output_buf[4 * g + j] + output_col, wasm_u8x16_narrow_i16x8(words, words), n);
    }
  }
}

int jsimd_can_idct_islow(void) { return 1; }
int jsimd_can_idct_4x4(void) { return 1; }

/* A libjpeg inverse-DCT method for blocks of n x n output samples. */
#define IDCT_METHOD(name, n)                                                                     \
  void name(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,           \
            JSAMPARRAY output_buf, JDIMENSION output_col) {                                      \
    (void)cinfo;                                                                                 \
    idct(n, compptr, coef_block, output_buf, output_col);                                        \
  }

IDCT_METHOD(jsimd_idct_islow, 8)
IDCT_METHOD(jpeg_idct_7x7, 7)
IDCT_METHOD(jpeg_idct_6x6, 6)
IDCT_METHOD(jpeg_idct_5x5, 5)
IDCT_METHOD(jsimd_idct_4x4, 4)
