#!/bin/sh
# Builds shared/imaging/wasm/webp.decode.wasm: libwebp's decoder and demuxer (Debian's source of
# 1.2.4, checked by its SHA-256) plus our glue (decoder.c), by Debian's clang for wasm32-wasi.
# Run: npm run build:webp. Needs: apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32
# (and curl). The .wasm is committed: neither the runtimes nor the tests build it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../shared/imaging/wasm/webp.decode.wasm"
version=1.2.4
sha256=7bf5a8a28cc69bcfa8cb214f2c3095703c6b73ac5fba4d5480c205331d9494df
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here/../debian-source.sh"
debian_source "libw/libwebp/libwebp_$version.orig.tar.gz" "$sha256" "$work"
src="$work/libwebp-$version"
# The decoder, its DSP (the SSE2/NEON/MIPS files compile to nothing here), its utilities, and the
# demuxer for an animation's first frame; no threads (WEBP_USE_THREAD unset).
set -- "$src"/src/dec/*.c "$src"/src/dsp/*.c "$src"/src/demux/demux.c \
  "$src"/src/utils/bit_reader_utils.c "$src"/src/utils/color_cache_utils.c \
  "$src"/src/utils/filters_utils.c "$src"/src/utils/huffman_utils.c \
  "$src"/src/utils/quant_levels_dec_utils.c "$src"/src/utils/random_utils.c \
  "$src"/src/utils/rescaler_utils.c "$src"/src/utils/thread_utils.c "$src"/src/utils/utils.c
clang --target=wasm32-wasi -O3 -msimd128 -mbulk-memory -DNDEBUG -I"$src" \
  -nostartfiles -Wl,--no-entry -Wl,--export=malloc -Wl,--export=free \
  -Wl,--initial-memory=1048576 -Wl,--max-memory=268435456 -Wl,--strip-all -Wl,--gc-sections \
  -o "$out" "$here/decoder.c" "$@"
echo "$out: $(wc -c < "$out") bytes"
