#!/bin/sh
# Builds shared/imaging/wasm/jpeg.decode.wasm (and the tests' test/fixtures/jpeg-c.wasm and
# test/fixtures/jpeg-arith.wasm):
# libjpeg-turbo's decompressor (Debian's source of
# 2.1.5, checked by its SHA-256) with arithmetic decoding, plus our row-streaming glue (decoder.c),
# by Debian's clang for wasm32-wasi with WASM SIMD auto-vectorisation. Run: npm run build:jpeg
# Needs: apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32 (and curl).
# The .wasm is committed: neither the runtimes nor the tests build it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../shared/imaging/wasm/jpeg.decode.wasm"
version=2.1.5
sha256=254f3642b04e309fee775123133c6464181addc150499561020312ec61c1bf7c
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here/../debian-source.sh"
debian_source "libj/libjpeg-turbo/libjpeg-turbo_$version.orig.tar.gz" "$sha256" "$work"
src="$work/libjpeg-turbo-$version"
# wasm32 has 32-bit pointers and native 64-bit integers, like x86-64's x32 ABI: give the Huffman
# decoder the 64-bit bit buffer it uses there (docs/benchmarks.md: the entropy decode's share).
sed -i 's/defined(__x86_64__) && defined(__ILP32__)/(defined(__wasm32__) || (defined(__x86_64__) \&\& defined(__ILP32__)))/' \
  "$src/jdhuff.h" "$src/jdhuff.c"
# A DCT-scaled decode gives subsampled chroma the luma's inverse DCT and leaves the rest to the
# fancy upsampler, instead of an inverse DCT twice the luma's size (10x10 for 4:2:0 at 5/8, 14x14 at
# 7/8): 5-12 % of the decode, for under 0.01 dB at full size on the bench's photos, our output being
# 4:2:0 again (docs/vision-decisions.md, "Chroma at the luma's DCT scale"). A full-size decode is unchanged.
sed -i 's/    while (ssize < DCTSIZE \&\&/    while (ssize < 1 \&\&/' "$src/jdmaster.c"
grep -q 'while (ssize < 1 ' "$src/jdmaster.c"
# The decompressor's sources (CMakeLists.txt's JPEG_SOURCES, decoding side), arithmetic decoding,
# and the SIMD stubs libjpeg-turbo uses where it has no SIMD of its own.
files="jcomapi.c jdapimin.c jdapistd.c jdarith.c jaricom.c jdatasrc.c jdcoefct.c jdcolor.c
  jddctmgr.c jdhuff.c jdinput.c jdmainct.c jdmarker.c jdmaster.c jdmerge.c jdphuff.c jdpostct.c
  jdsample.c jdtrans.c jidctflt.c jidctfst.c jidctint.c jidctred.c jquant1.c jquant2.c jutils.c
  jmemmgr.c jmemnobs.c"
# jsimd_none.c's stubs, but the YCbCr-to-RGB pair, the 4:2:0 fancy upsampling pair and the 8x8
# and 4x4 inverse DCT pairs: ycc-rgb-simd.c, upsample-simd.c and idct-simd.c are linked under those
# names. idct-simd.c also replaces jidctint.c's 7x7, 6x6 and 5x5, which have no SIMD hook.
clang --target=wasm32-wasi -O3 -c -I"$here" -I"$src" -Djsimd_can_ycc_rgb=jsimd_none_can_ycc_rgb \
  -Djsimd_ycc_rgb_convert=jsimd_none_ycc_rgb_convert \
  -Djsimd_can_h2v2_fancy_upsample=jsimd_none_can_h2v2_fancy_upsample \
  -Djsimd_h2v2_fancy_upsample=jsimd_none_h2v2_fancy_upsample \
  -Djsimd_can_idct_islow=jsimd_none_can_idct_islow -Djsimd_idct_islow=jsimd_none_idct_islow \
  -Djsimd_can_idct_4x4=jsimd_none_can_idct_4x4 -Djsimd_idct_4x4=jsimd_none_idct_4x4 \
  -o "$work/jsimd_none.o" "$src/jsimd_none.c"
clang --target=wasm32-wasi -O3 -c -I"$here" -I"$src" -Wno-shift-negative-value -Djpeg_idct_7x7=jpeg_idct_7x7_c \
  -Djpeg_idct_6x6=jpeg_idct_6x6_c -Djpeg_idct_5x5=jpeg_idct_5x5_c -o "$work/jidctint.o" "$src/jidctint.c"
set --
for f in $files; do [ "$f" = jidctint.c ] || set -- "$@" "$src/$f"; done
clang --target=wasm32-wasi -O3 -msimd128 -mbulk-memory -DNO_GETENV -DNO_PUTENV \
  -I"$here" -I"$src" -Wno-shift-negative-value \
  -nostartfiles -Wl,--no-entry -Wl,--export=malloc -Wl,--export=free \
  -Wl,--initial-memory=1048576 -Wl,--max-memory=268435456 -Wl,--strip-all -Wl,--gc-sections \
  -o "$out" "$here/decoder.c" "$here/ycc-rgb-simd.c" "$here/upsample-simd.c" "$here/idct-simd.c" \
  "$work/jsimd_none.o" "$work/jidctint.o" "$@"
echo "$out: $(wc -c < "$out") bytes"
# Test-only: the same decoder from libjpeg-turbo's C alone (no SIMD of ours), the reference every
# decode of ours is checked against byte for byte (test/node/vision.fidelity.test.ts).
reference="$here/../../test/fixtures/jpeg-c.wasm"
set --
for f in $files jsimd_none.c; do set -- "$@" "$src/$f"; done
clang --target=wasm32-wasi -O2 -DNO_GETENV -DNO_PUTENV -I"$here" -I"$src" -Wno-shift-negative-value \
  -nostartfiles -Wl,--no-entry -Wl,--export=malloc -Wl,--export=free -Wl,--strip-all -Wl,--gc-sections \
  -o "$reference" "$here/decoder.c" "$@"
echo "$reference: $(wc -c < "$reference") bytes"
# Test-only: the transcoder that writes the tests' arithmetic-coded fixtures (transcode.c).
fixture="$here/../../test/fixtures/jpeg-arith.wasm"
encoder="jcapimin.c jcarith.c jchuff.c jcmarker.c jcmaster.c jcparam.c jcphuff.c jctrans.c jdatadst.c"
set --
for f in $files jsimd_none.c $encoder; do set -- "$@" "$src/$f"; done
clang --target=wasm32-wasi -Oz -DNO_GETENV -DNO_PUTENV -I"$here" -I"$src" -Wno-shift-negative-value \
  -nostartfiles -Wl,--no-entry -Wl,--export=malloc -Wl,--export=free -Wl,--strip-all -Wl,--gc-sections \
  -o "$fixture" "$here/transcode.c" "$@"
echo "$fixture: $(wc -c < "$fixture") bytes"
