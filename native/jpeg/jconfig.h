/* libjpeg's configuration for our WASM decoder (native/jpeg/build.sh): 8-bit samples, the
 * in-memory source, arithmetic decoding on, no SIMD assembly (none exists for WASM). */
#define JPEG_LIB_VERSION  62
#define LIBJPEG_TURBO_VERSION  2.1.5
#define LIBJPEG_TURBO_VERSION_NUMBER  2001005
#define D_ARITH_CODING_SUPPORTED 1
#define MEM_SRCDST_SUPPORTED 1
/* Arithmetic encoding: only the test-only transcoder (transcode.c) links the encoder. */
#define C_ARITH_CODING_SUPPORTED 1
#define BITS_IN_JSAMPLE  8
