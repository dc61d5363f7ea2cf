#!/bin/sh
# Builds shared/imaging/wasm/zlib.wasm: zlib-ng's inflate and deflate in its zlib-compatible mode
# (the zlib-ng 2.2.4 source Debian ships as a component of node-yarnpkg, checked by its SHA-256)
# plus our glue (inflater.c for the PNG decoder, png-deflater.c for the PNG encoder), by Debian's
# clang for wasm32-wasi. zlib-ng's generic C code only (its SIMD paths are for x86, ARM, POWER and
# s390, none for WASM), except Adler-32: our WASM SIMD one (adler32-simd.c) replaces adler32_c.c.
# Run: npm run build:zlib. Needs: apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32
# (and curl, xz-utils). The .wasm is committed: neither the runtimes nor the tests build it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../../shared/imaging/wasm/zlib.wasm"
version=2.2.4
sha256=c8390d72b059003d3e1d2e4c3596b2f0e2820e02cfd421b14dfe44d9db58fca5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$here/../debian-source.sh"
debian_source "n/node-yarnpkg/node-yarnpkg_4.1.0+dfsg.orig-zlib-ng.tar.xz" "$sha256" "$work"
src="$work/zlib-ng-$version"
# configure writes zlib.h, zconf.h and zlib_name_mangling.h for the zlib-compatible API; Debian's
# tarball leaves out the tests, whose Makefile.in configure also expects.
mkdir -p "$src/test" && touch "$src/test/Makefile.in"
(cd "$src" && CC="clang --target=wasm32-wasi" ./configure --zlib-compat --static --without-optimizations >/dev/null)
exports=""
for name in zi_open zi_run zi_consumed zi_produced pd_open pd_input pd_rows pd_finish pd_output pd_length malloc; do exports="$exports -Wl,--export=$name"; done
# shellcheck disable=SC2086
clang --target=wasm32-wasi -O3 -msimd128 -mbulk-memory -std=c11 -DNDEBUG -DZLIB_COMPAT \
  -DHAVE_BUILTIN_CTZ -DHAVE_BUILTIN_CTZLL -DHAVE_ATTRIBUTE_ALIGNED -DHAVE_ALIGNED_ALLOC -I"$src" \
  -nostartfiles -Wl,--no-entry $exports \
  -Wl,--initial-memory=1048576 -Wl,--max-memory=16777216 -Wl,--strip-all -Wl,--gc-sections \
  -o "$out" "$here/inflater.c" "$here/png-deflater.c" "$src"/inflate.c "$src"/inftrees.c \
  "$src"/deflate*.c "$src"/trees.c "$src"/insert_string*.c "$src"/adler32.c "$src"/zutil.c \
  "$src"/crc32.c "$src"/crc32_braid_comb.c "$src"/functable.c "$src"/cpu_features.c "$here/adler32-simd.c" \
  $(ls "$src"/arch/generic/*.c | grep -v '/adler32_c\.c$')
echo "$out: $(wc -c < "$out") bytes"
