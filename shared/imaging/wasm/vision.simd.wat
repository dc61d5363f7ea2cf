;; 128-bit SIMD kernels of the vision fit, our own source: PNG row unfiltering and the RGBA flatten
;; on white, the Lanczos resampler's two passes and the JPEG encoder's colour conversion, forward DCT, quantise-and-count and scan write. The module
;; owns one memory that its JS bindings (vision.simd.ts, jpeg.simd.ts) lay out and grow to what one kernel set
;; needs (a fit's SimdPool, simd.instances.ts, may hand it zeroed to the fit's next one); no function
;; allocates. Only the entropy passes keep state between calls (globals: the DC predictions and the
;; bit writer), so one pass can run over the MCUs a window at a time; scanStart resets it.
;; Build: npm run build:wasm (scripts/build-wasm.ts) writes vision.simd.wasm next to this file.
(module
  (memory (export "memory") 1)

  ;; Bit writer state of writeScan: pending bits (right-aligned), their count, the next output byte.
  (global $acc (mut i64) (i64.const 0))
  (global $count (mut i32) (i32.const 0))
  (global $at (mut i32) (i32.const 0))
  ;; DC predictions of quantCount and writeScan: the last quantised DC of each component.
  (global $predY (mut i32) (i32.const 0))
  (global $predCb (mut i32) (i32.const 0))
  (global $predCr (mut i32) (i32.const 0))

  ;; Starts a quantise-and-count or scan pass: no DC predicted yet, no bits pending.
  (func (export "scanStart")
    (global.set $predY (i32.const 0))
    (global.set $predCb (i32.const 0))
    (global.set $predCr (i32.const 0))
    (global.set $acc (i64.const 0))
    (global.set $count (i32.const 0)))

  ;; PNG unfilter of one scanline in place: `n` bytes at $cur, the previous (unfiltered) line at
  ;; $prev, `bpp` bytes per pixel (1..8); both lines have 16 bytes of slack, which the kernels may
  ;; overwrite. Up adds 16 bytes at a time; Sub, Average and Paeth are serial per pixel, so they run
  ;; one pixel per step with all its channels in the lanes of one vector: for 3- and 4-byte pixels
  ;; (8-bit RGB, RGBA) four pixels per load and store ($unfilter3, $unfilter4); for the other sizes
  ;; here, with 8-byte loads and stores (the predictor is masked to the pixel's `bpp` lanes, so the
  ;; bytes past it are written back unchanged; each load then waits on the store before it, which
  ;; cost 15-20 ns a pixel: docs/vision-decisions.md, "Unfiltering four pixels a step"). The first
  ;; pixel needs no special case: with a = c = 0 each predictor reduces to what the PNG spec says for it.
  (func (export "unfilter") (param $filter i32) (param $cur i32) (param $prev i32) (param $n i32) (param $bpp i32)
    (local $i i32) (local $p i32) (local $mask v128) (local $x v128) (local $a v128) (local $b v128) (local $c v128)
    (local $a16 v128) (local $b16 v128) (local $c16 v128) (local $pa v128) (local $pb v128) (local $pc v128)
    (local $pred v128) (local $ones v128)
    (if (i32.eq (local.get $filter) (i32.const 2))
      (then
        (block $upDone
          (loop $up
            (br_if $upDone (i32.ge_u (local.get $i) (local.get $n)))
            (v128.store (i32.add (local.get $cur) (local.get $i))
              (i8x16.add (v128.load (i32.add (local.get $cur) (local.get $i))) (v128.load (i32.add (local.get $prev) (local.get $i)))))
            (local.set $i (i32.add (local.get $i) (i32.const 16)))
            (br $up)))
        (return)))
    (if (i32.eqz (local.get $filter)) (then (return)))
    (if (i32.eq (local.get $bpp) (i32.const 3))
      (then (call $unfilter3 (local.get $filter) (local.get $cur) (local.get $prev) (local.get $n)) (return)))
    (if (i32.eq (local.get $bpp) (i32.const 4))
      (then (call $unfilter4 (local.get $filter) (local.get $cur) (local.get $prev) (local.get $n)) (return)))
    (local.set $mask (i64x2.replace_lane 0 (v128.const i64x2 0 0)
      (select (i64.const -1)
        (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (i32.shl (local.get $bpp) (i32.const 3)))) (i64.const 1))
        (i32.ge_u (local.get $bpp) (i32.const 8)))))
    (local.set $a (v128.const i32x4 0 0 0 0))
    (local.set $c (v128.const i32x4 0 0 0 0))
    (local.set $ones (v128.const i8x16 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1))
    (block $done
      (loop $pixel
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $p (i32.add (local.get $cur) (local.get $i)))
        (local.set $x (v128.load64_zero (local.get $p)))
        (if (i32.eq (local.get $filter) (i32.const 1))
          (then (local.set $pred (local.get $a)))
          (else
            (local.set $b (v128.load64_zero (i32.add (local.get $prev) (local.get $i))))
            (if (i32.eq (local.get $filter) (i32.const 3))
              ;; floor((a + b) / 2) = rounding average minus the carried-out low bit.
              (then (local.set $pred (i8x16.sub (i8x16.avgr_u (local.get $a) (local.get $b))
                (v128.and (v128.xor (local.get $a) (local.get $b)) (local.get $ones)))))
              (else
                ;; Paeth in i16 lanes: pa = |b - c|, pb = |a - c|, pc = |a + b - 2c|; ties prefer a, then b.
                (local.set $a16 (i16x8.extend_low_i8x16_u (local.get $a)))
                (local.set $b16 (i16x8.extend_low_i8x16_u (local.get $b)))
                (local.set $c16 (i16x8.extend_low_i8x16_u (local.get $c)))
                (local.set $pa (i16x8.sub (local.get $b16) (local.get $c16)))
                (local.set $pb (i16x8.sub (local.get $a16) (local.get $c16)))
                (local.set $pc (i16x8.abs (i16x8.add (local.get $pa) (local.get $pb))))
                (local.set $pa (i16x8.abs (local.get $pa)))
                (local.set $pb (i16x8.abs (local.get $pb)))
                (local.set $pred (i8x16.narrow_i16x8_u
                  (v128.bitselect
                    (local.get $a16)
                    (v128.bitselect (local.get $b16) (local.get $c16) (i16x8.le_s (local.get $pb) (local.get $pc)))
                    (v128.and (i16x8.le_s (local.get $pa) (local.get $pb)) (i16x8.le_s (local.get $pa) (local.get $pc))))
                  (local.get $a16)))
                (if (i32.ne (local.get $filter) (i32.const 4)) (then (unreachable)))))
            (local.set $c (local.get $b))))
        (local.set $a (v128.and (i8x16.add (local.get $x) (v128.and (local.get $pred) (local.get $mask))) (local.get $mask)))
        (v128.store64_lane 0 (local.get $p) (v128.or (local.get $a) (v128.andnot (local.get $x) (local.get $mask))))
        (local.set $i (i32.add (local.get $i) (local.get $bpp)))
        (br $pixel))))

  ;; Sub, Average or Paeth of one scanline of 3-byte pixels (unfilter's contract), four
  ;; pixels (12 bytes) per step: one load of the line and one of the previous line per step,
  ;; each pixel's channels zero-extended into the i16 lanes of one vector by a shuffle, off the
  ;; serial chain; only the predictor and the add carry from pixel to pixel. The four results are
  ;; narrowed and packed back into 12 bytes stored without overlapping the next step's load.
  (func $unfilter3 (param $filter i32) (param $cur i32) (param $prev i32) (param $n i32)
    (local $i i32) (local $p i32) (local $v v128) (local $w v128) (local $zero v128) (local $a v128) (local $c v128)
    (local $x0 v128) (local $x1 v128) (local $x2 v128) (local $x3 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $r0 v128) (local $r1 v128) (local $r2 v128) (local $r3 v128)
    (local $pa0 v128) (local $pa v128) (local $pb0 v128) (local $pb v128) (local $pc v128)
    ;; Constants in locals set before the loops: V8's optimising tier (Turboshaft) rebuilds a v128.const
    ;; or a shuffle's mask inside a loop at every use (docs/vision-decisions.md, "Constants out of the loops").
    (local $m0 v128) (local $m1 v128) (local $m2 v128) (local $m3 v128) (local $byte v128) (local $pack01 v128) (local $pack23 v128)
    (local.set $zero (v128.const i32x4 0 0 0 0))
    (local.set $m0 (v128.const i8x16 0 128 1 128 2 128 128 128 128 128 128 128 128 128 128 128))
    (local.set $m1 (v128.const i8x16 3 128 4 128 5 128 128 128 128 128 128 128 128 128 128 128))
    (local.set $m2 (v128.const i8x16 6 128 7 128 8 128 128 128 128 128 128 128 128 128 128 128))
    (local.set $m3 (v128.const i8x16 9 128 10 128 11 128 128 128 128 128 128 128 128 128 128 128))
    (local.set $byte (v128.const i16x8 255 255 255 255 255 255 255 255))
    (local.set $pack01 (v128.const i8x16 0 1 2 8 9 10 128 128 128 128 128 128 128 128 128 128))
    (local.set $pack23 (v128.const i8x16 128 128 128 128 128 128 0 1 2 8 9 10 128 128 128 128))
    (local.set $a (local.get $zero))
    (local.set $c (local.get $zero))
    (if (i32.eq (local.get $filter) (i32.const 1))
      (then
        (loop $sub
          (local.set $p (i32.add (local.get $cur) (local.get $i)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $x0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $x1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $x2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $x3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $a (v128.and (i16x8.add (local.get $x0) (local.get $a)) (local.get $byte)))
          (local.set $r0 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x1) (local.get $a)) (local.get $byte)))
          (local.set $r1 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x2) (local.get $a)) (local.get $byte)))
          (local.set $r2 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x3) (local.get $a)) (local.get $byte)))
          (local.set $r3 (local.get $a))
          (local.set $w (v128.or
            (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $r0) (local.get $r1)) (local.get $pack01))
            (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $r2) (local.get $r3)) (local.get $pack23))))
          (v128.store64_lane 0 (local.get $p) (local.get $w))
          (v128.store32_lane offset=8 2 (local.get $p) (local.get $w))
          (local.set $i (i32.add (local.get $i) (i32.const 12)))
          (br_if $sub (i32.lt_u (local.get $i) (local.get $n))))
        (return)))
    (if (i32.eq (local.get $filter) (i32.const 3))
      (then
        (loop $avg
          (local.set $p (i32.add (local.get $cur) (local.get $i)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $x0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $x1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $x2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $x3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $v (v128.load (i32.add (local.get $prev) (local.get $i))))
          (local.set $b0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $b1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $b2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $b3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $a (v128.and (i16x8.add (local.get $x0)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b0)) (i32.const 1))) (local.get $byte)))
          (local.set $r0 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x1)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b1)) (i32.const 1))) (local.get $byte)))
          (local.set $r1 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x2)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b2)) (i32.const 1))) (local.get $byte)))
          (local.set $r2 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x3)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b3)) (i32.const 1))) (local.get $byte)))
          (local.set $r3 (local.get $a))
          (local.set $w (v128.or
            (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $r0) (local.get $r1)) (local.get $pack01))
            (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $r2) (local.get $r3)) (local.get $pack23))))
          (v128.store64_lane 0 (local.get $p) (local.get $w))
          (v128.store32_lane offset=8 2 (local.get $p) (local.get $w))
          (local.set $i (i32.add (local.get $i) (i32.const 12)))
          (br_if $avg (i32.lt_u (local.get $i) (local.get $n))))
        (return)))
    (if (i32.eq (local.get $filter) (i32.const 4))
      (then
        (loop $paeth
          (local.set $p (i32.add (local.get $cur) (local.get $i)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $x0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $x1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $x2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $x3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $v (v128.load (i32.add (local.get $prev) (local.get $i))))
          (local.set $b0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $b1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $b2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $b3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $pa0 (i16x8.sub (local.get $b0) (local.get $c)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $c)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x0)
            (v128.bitselect
              (v128.bitselect (local.get $c) (local.get $b0) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r0 (local.get $a))
          (local.set $pa0 (i16x8.sub (local.get $b1) (local.get $b0)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $b0)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x1)
            (v128.bitselect
              (v128.bitselect (local.get $b0) (local.get $b1) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r1 (local.get $a))
          (local.set $pa0 (i16x8.sub (local.get $b2) (local.get $b1)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $b1)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x2)
            (v128.bitselect
              (v128.bitselect (local.get $b1) (local.get $b2) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r2 (local.get $a))
          (local.set $pa0 (i16x8.sub (local.get $b3) (local.get $b2)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $b2)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x3)
            (v128.bitselect
              (v128.bitselect (local.get $b2) (local.get $b3) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r3 (local.get $a))
          (local.set $c (local.get $b3))
          (local.set $w (v128.or
            (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $r0) (local.get $r1)) (local.get $pack01))
            (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $r2) (local.get $r3)) (local.get $pack23))))
          (v128.store64_lane 0 (local.get $p) (local.get $w))
          (v128.store32_lane offset=8 2 (local.get $p) (local.get $w))
          (local.set $i (i32.add (local.get $i) (i32.const 12)))
          (br_if $paeth (i32.lt_u (local.get $i) (local.get $n))))
        (return)))
    (unreachable))

  ;; Sub, Average or Paeth of one scanline of 4-byte pixels (unfilter's contract), four
  ;; pixels (16 bytes) per step: one load of the line and one of the previous line per step,
  ;; each pixel's channels zero-extended into the i16 lanes of one vector by a shuffle, off the
  ;; serial chain; only the predictor and the add carry from pixel to pixel. The four results are
  ;; narrowed and packed back into 16 bytes stored without overlapping the next step's load.
  (func $unfilter4 (param $filter i32) (param $cur i32) (param $prev i32) (param $n i32)
    (local $i i32) (local $p i32) (local $v v128) (local $w v128) (local $zero v128) (local $a v128) (local $c v128)
    (local $x0 v128) (local $x1 v128) (local $x2 v128) (local $x3 v128)
    (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $r0 v128) (local $r1 v128) (local $r2 v128) (local $r3 v128)
    (local $pa0 v128) (local $pa v128) (local $pb0 v128) (local $pb v128) (local $pc v128)
    ;; Constants in locals set before the loops: V8's optimising tier (Turboshaft) rebuilds a v128.const
    ;; or a shuffle's mask inside a loop at every use (docs/vision-decisions.md, "Constants out of the loops").
    (local $m0 v128) (local $m1 v128) (local $m2 v128) (local $m3 v128) (local $byte v128)
    (local.set $zero (v128.const i32x4 0 0 0 0))
    (local.set $m0 (v128.const i8x16 0 128 1 128 2 128 3 128 128 128 128 128 128 128 128 128))
    (local.set $m1 (v128.const i8x16 4 128 5 128 6 128 7 128 128 128 128 128 128 128 128 128))
    (local.set $m2 (v128.const i8x16 8 128 9 128 10 128 11 128 128 128 128 128 128 128 128 128))
    (local.set $m3 (v128.const i8x16 12 128 13 128 14 128 15 128 128 128 128 128 128 128 128 128))
    (local.set $byte (v128.const i16x8 255 255 255 255 255 255 255 255))
    (local.set $a (local.get $zero))
    (local.set $c (local.get $zero))
    (if (i32.eq (local.get $filter) (i32.const 1))
      (then
        (loop $sub
          (local.set $p (i32.add (local.get $cur) (local.get $i)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $x0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $x1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $x2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $x3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $a (v128.and (i16x8.add (local.get $x0) (local.get $a)) (local.get $byte)))
          (local.set $r0 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x1) (local.get $a)) (local.get $byte)))
          (local.set $r1 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x2) (local.get $a)) (local.get $byte)))
          (local.set $r2 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x3) (local.get $a)) (local.get $byte)))
          (local.set $r3 (local.get $a))
          (local.set $w (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27
            (i8x16.narrow_i16x8_u (local.get $r0) (local.get $r1)) (i8x16.narrow_i16x8_u (local.get $r2) (local.get $r3))))
          (v128.store (local.get $p) (local.get $w))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $sub (i32.lt_u (local.get $i) (local.get $n))))
        (return)))
    (if (i32.eq (local.get $filter) (i32.const 3))
      (then
        (loop $avg
          (local.set $p (i32.add (local.get $cur) (local.get $i)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $x0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $x1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $x2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $x3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $v (v128.load (i32.add (local.get $prev) (local.get $i))))
          (local.set $b0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $b1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $b2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $b3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $a (v128.and (i16x8.add (local.get $x0)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b0)) (i32.const 1))) (local.get $byte)))
          (local.set $r0 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x1)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b1)) (i32.const 1))) (local.get $byte)))
          (local.set $r1 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x2)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b2)) (i32.const 1))) (local.get $byte)))
          (local.set $r2 (local.get $a))
          (local.set $a (v128.and (i16x8.add (local.get $x3)
            (i16x8.shr_u (i16x8.add (local.get $a) (local.get $b3)) (i32.const 1))) (local.get $byte)))
          (local.set $r3 (local.get $a))
          (local.set $w (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27
            (i8x16.narrow_i16x8_u (local.get $r0) (local.get $r1)) (i8x16.narrow_i16x8_u (local.get $r2) (local.get $r3))))
          (v128.store (local.get $p) (local.get $w))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $avg (i32.lt_u (local.get $i) (local.get $n))))
        (return)))
    (if (i32.eq (local.get $filter) (i32.const 4))
      (then
        (loop $paeth
          (local.set $p (i32.add (local.get $cur) (local.get $i)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $x0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $x1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $x2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $x3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $v (v128.load (i32.add (local.get $prev) (local.get $i))))
          (local.set $b0 (i8x16.swizzle (local.get $v) (local.get $m0)))
          (local.set $b1 (i8x16.swizzle (local.get $v) (local.get $m1)))
          (local.set $b2 (i8x16.swizzle (local.get $v) (local.get $m2)))
          (local.set $b3 (i8x16.swizzle (local.get $v) (local.get $m3)))
          (local.set $pa0 (i16x8.sub (local.get $b0) (local.get $c)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $c)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x0)
            (v128.bitselect
              (v128.bitselect (local.get $c) (local.get $b0) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r0 (local.get $a))
          (local.set $pa0 (i16x8.sub (local.get $b1) (local.get $b0)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $b0)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x1)
            (v128.bitselect
              (v128.bitselect (local.get $b0) (local.get $b1) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r1 (local.get $a))
          (local.set $pa0 (i16x8.sub (local.get $b2) (local.get $b1)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $b1)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x2)
            (v128.bitselect
              (v128.bitselect (local.get $b1) (local.get $b2) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r2 (local.get $a))
          (local.set $pa0 (i16x8.sub (local.get $b3) (local.get $b2)))
          (local.set $pa (i16x8.abs (local.get $pa0)))
          (local.set $pb0 (i16x8.sub (local.get $a) (local.get $b2)))
          (local.set $pc (i16x8.abs (i16x8.add (local.get $pa0) (local.get $pb0))))
          (local.set $pb (i16x8.abs (local.get $pb0)))
          (local.set $a (v128.and (i16x8.add (local.get $x3)
            (v128.bitselect
              (v128.bitselect (local.get $b2) (local.get $b3) (i16x8.gt_s (local.get $pb) (local.get $pc)))
              (local.get $a)
              (v128.or (i16x8.gt_s (local.get $pa) (local.get $pb)) (i16x8.gt_s (local.get $pa) (local.get $pc)))))
            (local.get $byte)))
          (local.set $r3 (local.get $a))
          (local.set $c (local.get $b3))
          (local.set $w (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27
            (i8x16.narrow_i16x8_u (local.get $r0) (local.get $r1)) (i8x16.narrow_i16x8_u (local.get $r2) (local.get $r3))))
          (v128.store (local.get $p) (local.get $w))
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br_if $paeth (i32.lt_u (local.get $i) (local.get $n))))
        (return)))
    (unreachable))


  ;; 8-bit RGBA to RGB flattened on white, `pixels` from $src to $dst (16 bytes of slack after
  ;; each), four pixels per step: round((c a + 255 (255 - a)) / 255) as (v + (v >> 8)) >> 8 with
  ;; v = c a + 255 (255 - a) + 128, which stays below 2^16, so u16 lanes are exact (the JS path's formula).
  (func (export "flattenRgba") (param $src i32) (param $dst i32) (param $pixels i32)
    (local $v v128) (local $lo v128) (local $hi v128)
    ;; Constants in locals set before the loop (see $unfilter3).
    (local $alphaLo v128) (local $alphaHi v128) (local $pack v128) (local $k255 v128) (local $k128 v128)
    (local.set $alphaLo (v128.const i8x16 3 128 3 128 3 128 3 128 7 128 7 128 7 128 7 128))
    (local.set $alphaHi (v128.const i8x16 11 128 11 128 11 128 11 128 15 128 15 128 15 128 15 128))
    (local.set $pack (v128.const i8x16 0 1 2 4 5 6 8 9 10 12 13 14 0 0 0 0))
    (local.set $k255 (v128.const i16x8 255 255 255 255 255 255 255 255))
    (local.set $k128 (v128.const i16x8 128 128 128 128 128 128 128 128))
    (block $done
      (loop $quad
        (br_if $done (i32.le_s (local.get $pixels) (i32.const 0)))
        (local.set $v (v128.load (local.get $src)))
        (local.set $lo (call $blendWhite
          (i16x8.extend_low_i8x16_u (local.get $v))
          (i8x16.swizzle (local.get $v) (local.get $alphaLo))
          (local.get $k255) (local.get $k128)))
        (local.set $hi (call $blendWhite
          (i16x8.extend_high_i8x16_u (local.get $v))
          (i8x16.swizzle (local.get $v) (local.get $alphaHi))
          (local.get $k255) (local.get $k128)))
        (v128.store (local.get $dst)
          (i8x16.swizzle (i8x16.narrow_i16x8_u (local.get $lo) (local.get $hi)) (local.get $pack)))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 12)))
        (local.set $pixels (i32.sub (local.get $pixels) (i32.const 4)))
        (br $quad))))

  ;; $k255 and $k128: the constants 255 and 128 in every i16 lane, from the caller's locals.
  (func $blendWhite (param $c v128) (param $a v128) (param $k255 v128) (param $k128 v128) (result v128)
    (local $v v128)
    (local.set $v (i16x8.add
      (i16x8.mul (local.get $c) (local.get $a))
      (i16x8.add (i16x8.mul (i16x8.sub (local.get $k255) (local.get $a)) (local.get $k255)) (local.get $k128))))
    (i16x8.shr_u (i16x8.add (local.get $v) (i16x8.shr_u (local.get $v) (i32.const 8))) (i32.const 8)))

  ;; Whether the `n` bytes at $a and at $b are the same: 1 or 0. 64 bytes a step (their XORs OR-ed,
  ;; one branch a step), then 16, then byte by byte; both areas are read only within their `n` bytes.
  ;; The resampler asks it of each source row against the last one (a UI screenshot repeats rows:
  ;; the computer-use session's 62 %), and a repeat takes the last row's filtered copy instead of
  ;; the horizontal pass (docs/vision-decisions.md, "Repeated rows resampled once").
  (func (export "sameBytes") (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $a) (local.get $n)))
    (block $bytes
      (loop $wide
        (br_if $bytes (i32.gt_u (i32.add (local.get $a) (i32.const 64)) (local.get $end)))
        (if (v128.any_true (v128.or
              (v128.or
                (v128.xor (v128.load (local.get $a)) (v128.load (local.get $b)))
                (v128.xor (v128.load offset=16 (local.get $a)) (v128.load offset=16 (local.get $b))))
              (v128.or
                (v128.xor (v128.load offset=32 (local.get $a)) (v128.load offset=32 (local.get $b)))
                (v128.xor (v128.load offset=48 (local.get $a)) (v128.load offset=48 (local.get $b))))))
          (then (return (i32.const 0))))
        (local.set $a (i32.add (local.get $a) (i32.const 64)))
        (local.set $b (i32.add (local.get $b) (i32.const 64)))
        (br $wide)))
    (block $tail
      (loop $narrow
        (br_if $tail (i32.gt_u (i32.add (local.get $a) (i32.const 16)) (local.get $end)))
        (if (v128.any_true (v128.xor (v128.load (local.get $a)) (v128.load (local.get $b))))
          (then (return (i32.const 0))))
        (local.set $a (i32.add (local.get $a) (i32.const 16)))
        (local.set $b (i32.add (local.get $b) (i32.const 16)))
        (br $narrow)))
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (if (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b)))
          (then (return (i32.const 0))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $byte)))
    (i32.const 1))

  ;; Horizontal pass of one RGB byte row: for each output pixel x, taps come in quads of 4 source
  ;; pixels (12 bytes, read as one 16-byte load); its weights are 4 i16 per quad (w0 w1 w2 w3), read
  ;; 8 at a time (two quads a load) and spread by i32 lane splats (pshufd: no mask) into
  ;; [w0 w1 w0 w1 ...] and [w2 w3 w2 w3 ...]; two swizzles spread the bytes into the i16 lanes
  ;; r0 r1 g0 g1 b0 b1 0 0 and r2 r3 g2 g3 b2 b3 0 0 (indices of 128 give zero, so each is one
  ;; pshufb on x64; the zero lanes cancel the weights' last lane pair), and two i32x4.dot_i16x8_s
  ;; give R, G, B in lanes 0..2. Two to four quads (up to 16 taps: the fits' shrinks up to 2x, past
  ;; which the box stage takes over) run unrolled, one loop per count; other counts loop over the
  ;; quads. Per pixel at two quads: 5 memory accesses (was 8 with the weights stored spread), each
  ;; bounds-checked in workerd (docs/vision-decisions.md, "Constants out of the loops").
  ;; Exact integer math, identical to the JS path: (round + sum) >> shift, stored as i32 R G B
  ;; (the fourth lane spills onto the next pixel's R, rewritten next; the row has 4 bytes of slack).
  ;; starts: i32 byte offset (start * 3) per output pixel; weights: quads * 8 bytes per pixel.
  (func (export "hfilter")
    (param $src i32) (param $dst i32) (param $weights i32) (param $starts i32)
    (param $width i32) (param $quads i32) (param $shift i32)
    (local $x i32) (local $p i32) (local $w i32) (local $q i32) (local $acc v128) (local $v v128)
    (local $round v128) (local $lo v128) (local $hi v128) (local $w0 v128) (local $w1 v128)
    (local.set $lo (v128.const i8x16 0 128 3 128 1 128 4 128 2 128 5 128 128 128 128 128))
    (local.set $hi (v128.const i8x16 6 128 9 128 7 128 10 128 8 128 11 128 128 128 128 128))
    (local.set $round (i32x4.splat (i32.shl (i32.const 1) (i32.sub (local.get $shift) (i32.const 1)))))
    (local.set $w (local.get $weights))
    (if (i32.eq (local.get $quads) (i32.const 2))
      (then
        (loop $unrolled2
          (local.set $p (i32.add (local.get $src) (i32.load (i32.add (local.get $starts) (i32.shl (local.get $x) (i32.const 2))))))
          (local.set $acc (local.get $round))
          (local.set $w0 (v128.load (local.get $w)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $w0) (local.get $w0))))))
          (local.set $v (v128.load offset=12 (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $w0) (local.get $w0))))))
          (v128.store
            (i32.add (local.get $dst) (i32.mul (local.get $x) (i32.const 12)))
            (i32x4.shr_s (local.get $acc) (local.get $shift)))
          (local.set $w (i32.add (local.get $w) (i32.const 16)))
          (local.set $x (i32.add (local.get $x) (i32.const 1)))
          (br_if $unrolled2 (i32.lt_u (local.get $x) (local.get $width))))
        (return)))
    (if (i32.eq (local.get $quads) (i32.const 3))
      (then
        (loop $unrolled3
          (local.set $p (i32.add (local.get $src) (i32.load (i32.add (local.get $starts) (i32.shl (local.get $x) (i32.const 2))))))
          (local.set $acc (local.get $round))
          (local.set $w0 (v128.load (local.get $w)))
          (local.set $w1 (v128.load64_zero offset=16 (local.get $w)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $w0) (local.get $w0))))))
          (local.set $v (v128.load offset=12 (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $w0) (local.get $w0))))))
          (local.set $v (v128.load offset=24 (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $w1) (local.get $w1)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $w1) (local.get $w1))))))
          (v128.store
            (i32.add (local.get $dst) (i32.mul (local.get $x) (i32.const 12)))
            (i32x4.shr_s (local.get $acc) (local.get $shift)))
          (local.set $w (i32.add (local.get $w) (i32.const 24)))
          (local.set $x (i32.add (local.get $x) (i32.const 1)))
          (br_if $unrolled3 (i32.lt_u (local.get $x) (local.get $width))))
        (return)))
    (if (i32.eq (local.get $quads) (i32.const 4))
      (then
        (loop $unrolled4
          (local.set $p (i32.add (local.get $src) (i32.load (i32.add (local.get $starts) (i32.shl (local.get $x) (i32.const 2))))))
          (local.set $acc (local.get $round))
          (local.set $w0 (v128.load (local.get $w)))
          (local.set $w1 (v128.load offset=16 (local.get $w)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $w0) (local.get $w0))))))
          (local.set $v (v128.load offset=12 (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $w0) (local.get $w0))))))
          (local.set $v (v128.load offset=24 (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $w1) (local.get $w1)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $w1) (local.get $w1))))))
          (local.set $v (v128.load offset=36 (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $w1) (local.get $w1)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $w1) (local.get $w1))))))
          (v128.store
            (i32.add (local.get $dst) (i32.mul (local.get $x) (i32.const 12)))
            (i32x4.shr_s (local.get $acc) (local.get $shift)))
          (local.set $w (i32.add (local.get $w) (i32.const 32)))
          (local.set $x (i32.add (local.get $x) (i32.const 1)))
          (br_if $unrolled4 (i32.lt_u (local.get $x) (local.get $width))))
        (return)))
    (block $done
      (loop $pixels
        (br_if $done (i32.ge_u (local.get $x) (local.get $width)))
        (local.set $p (i32.add (local.get $src) (i32.load (i32.add (local.get $starts) (i32.shl (local.get $x) (i32.const 2))))))
        (local.set $acc (local.get $round))
        (local.set $q (local.get $quads))
        (loop $taps
          (local.set $w0 (v128.load64_zero (local.get $w)))
          (local.set $v (v128.load (local.get $p)))
          (local.set $acc (i32x4.add (local.get $acc) (i32x4.add
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $lo)) (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $w0) (local.get $w0)))
            (i32x4.dot_i16x8_s (i8x16.swizzle (local.get $v) (local.get $hi)) (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $w0) (local.get $w0))))))
          (local.set $p (i32.add (local.get $p) (i32.const 12)))
          (local.set $w (i32.add (local.get $w) (i32.const 8)))
          (local.set $q (i32.sub (local.get $q) (i32.const 1)))
          (br_if $taps (local.get $q)))
        (v128.store
          (i32.add (local.get $dst) (i32.mul (local.get $x) (i32.const 12)))
          (i32x4.shr_s (local.get $acc) (local.get $shift)))
        (local.set $x (i32.add (local.get $x) (i32.const 1)))
        (br $pixels))))

  ;; Vertical pass: one output row of `chunks` x 16 bytes from `n` filtered rows (i32, 1/256 of a
  ;; level) whose addresses and i32 weights (1/4096) sit in the `rows` and `taps` arrays.
  ;; Sixteen lanes per sweep over the taps: (round + sum) >> shift, then saturating narrows
  ;; i32 -> i16 -> u8, which is the JS path's clamp to 0..255. Exact, identical to the JS path.
  (func (export "vfilter")
    (param $rows i32) (param $taps i32) (param $n i32) (param $dst i32) (param $chunks i32) (param $shift i32)
    (local $c i32) (local $t i32) (local $at i32) (local $k v128) (local $off i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $round v128)
    (local $p0 i32) (local $k0 v128)
    (local $p1 i32) (local $k1 v128)
    (local $p2 i32) (local $k2 v128)
    (local $p3 i32) (local $k3 v128)
    (local $p4 i32) (local $k4 v128)
    (local $p5 i32) (local $k5 v128)
    (local $p6 i32) (local $k6 v128)
    (local $p7 i32) (local $k7 v128)
    (local $p8 i32) (local $k8 v128)
    (local $p9 i32) (local $k9 v128)
    (local $p10 i32) (local $k10 v128)
    (local $p11 i32) (local $k11 v128)
    (local.set $round (i32x4.splat (i32.shl (i32.const 1) (i32.sub (local.get $shift) (i32.const 1)))))
    ;; Up to 8 taps (the fits' shrinks up to 1.4x), or 9 to 12 (up to 2x): the rows' addresses and
    ;; weights held in locals for the whole row, taps past `n` weighted 0 (adding nothing), so each
    ;; chunk is 32 or 48 loads and no per-tap loop: a third fewer memory accesses, each of which
    ;; carries a bounds check in workerd (no WASM trap handler there: docs/vision-decisions.md,
    ;; "Constants out of the loops"). More taps keep the loop below.
    (if (i32.le_u (local.get $n) (i32.const 8))
      (then
        (local.set $p0 (i32.load (local.get $rows)))
        (local.set $k0 (i32x4.splat (i32.load (local.get $taps))))
        (local.set $p1 (select (i32.load offset=4 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 1))))
        (local.set $k1 (select (i32x4.splat (i32.load offset=4 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 1))))
        (local.set $p2 (select (i32.load offset=8 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 2))))
        (local.set $k2 (select (i32x4.splat (i32.load offset=8 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 2))))
        (local.set $p3 (select (i32.load offset=12 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 3))))
        (local.set $k3 (select (i32x4.splat (i32.load offset=12 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 3))))
        (local.set $p4 (select (i32.load offset=16 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 4))))
        (local.set $k4 (select (i32x4.splat (i32.load offset=16 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 4))))
        (local.set $p5 (select (i32.load offset=20 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 5))))
        (local.set $k5 (select (i32x4.splat (i32.load offset=20 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 5))))
        (local.set $p6 (select (i32.load offset=24 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 6))))
        (local.set $k6 (select (i32x4.splat (i32.load offset=24 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 6))))
        (local.set $p7 (select (i32.load offset=28 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 7))))
        (local.set $k7 (select (i32x4.splat (i32.load offset=28 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 7))))
        (block $done8
          (loop $chunk8
            (br_if $done8 (i32.ge_u (local.get $c) (local.get $chunks)))
            (local.set $off (i32.shl (local.get $c) (i32.const 6)))
            (local.set $a0 (local.get $round))
            (local.set $a1 (local.get $round))
            (local.set $a2 (local.get $round))
            (local.set $a3 (local.get $round))
            (local.set $at (i32.add (local.get $p0) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k0))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k0))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k0))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k0))))
            (local.set $at (i32.add (local.get $p1) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k1))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k1))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k1))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k1))))
            (local.set $at (i32.add (local.get $p2) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k2))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k2))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k2))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k2))))
            (local.set $at (i32.add (local.get $p3) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k3))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k3))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k3))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k3))))
            (local.set $at (i32.add (local.get $p4) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k4))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k4))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k4))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k4))))
            (local.set $at (i32.add (local.get $p5) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k5))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k5))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k5))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k5))))
            (local.set $at (i32.add (local.get $p6) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k6))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k6))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k6))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k6))))
            (local.set $at (i32.add (local.get $p7) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k7))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k7))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k7))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k7))))
            (v128.store
              (i32.add (local.get $dst) (i32.shl (local.get $c) (i32.const 4)))
              (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a0) (local.get $shift)) (i32x4.shr_s (local.get $a1) (local.get $shift)))
                (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a2) (local.get $shift)) (i32x4.shr_s (local.get $a3) (local.get $shift)))))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $chunk8)))
        (return)))
    (if (i32.le_u (local.get $n) (i32.const 12))
      (then
        (local.set $p0 (i32.load (local.get $rows)))
        (local.set $k0 (i32x4.splat (i32.load (local.get $taps))))
        (local.set $p1 (select (i32.load offset=4 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 1))))
        (local.set $k1 (select (i32x4.splat (i32.load offset=4 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 1))))
        (local.set $p2 (select (i32.load offset=8 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 2))))
        (local.set $k2 (select (i32x4.splat (i32.load offset=8 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 2))))
        (local.set $p3 (select (i32.load offset=12 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 3))))
        (local.set $k3 (select (i32x4.splat (i32.load offset=12 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 3))))
        (local.set $p4 (select (i32.load offset=16 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 4))))
        (local.set $k4 (select (i32x4.splat (i32.load offset=16 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 4))))
        (local.set $p5 (select (i32.load offset=20 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 5))))
        (local.set $k5 (select (i32x4.splat (i32.load offset=20 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 5))))
        (local.set $p6 (select (i32.load offset=24 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 6))))
        (local.set $k6 (select (i32x4.splat (i32.load offset=24 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 6))))
        (local.set $p7 (select (i32.load offset=28 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 7))))
        (local.set $k7 (select (i32x4.splat (i32.load offset=28 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 7))))
        (local.set $p8 (select (i32.load offset=32 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 8))))
        (local.set $k8 (select (i32x4.splat (i32.load offset=32 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 8))))
        (local.set $p9 (select (i32.load offset=36 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 9))))
        (local.set $k9 (select (i32x4.splat (i32.load offset=36 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 9))))
        (local.set $p10 (select (i32.load offset=40 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 10))))
        (local.set $k10 (select (i32x4.splat (i32.load offset=40 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 10))))
        (local.set $p11 (select (i32.load offset=44 (local.get $rows)) (local.get $p0) (i32.gt_u (local.get $n) (i32.const 11))))
        (local.set $k11 (select (i32x4.splat (i32.load offset=44 (local.get $taps))) (v128.const i32x4 0 0 0 0) (i32.gt_u (local.get $n) (i32.const 11))))
        (block $done12
          (loop $chunk12
            (br_if $done12 (i32.ge_u (local.get $c) (local.get $chunks)))
            (local.set $off (i32.shl (local.get $c) (i32.const 6)))
            (local.set $a0 (local.get $round))
            (local.set $a1 (local.get $round))
            (local.set $a2 (local.get $round))
            (local.set $a3 (local.get $round))
            (local.set $at (i32.add (local.get $p0) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k0))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k0))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k0))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k0))))
            (local.set $at (i32.add (local.get $p1) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k1))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k1))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k1))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k1))))
            (local.set $at (i32.add (local.get $p2) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k2))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k2))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k2))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k2))))
            (local.set $at (i32.add (local.get $p3) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k3))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k3))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k3))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k3))))
            (local.set $at (i32.add (local.get $p4) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k4))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k4))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k4))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k4))))
            (local.set $at (i32.add (local.get $p5) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k5))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k5))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k5))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k5))))
            (local.set $at (i32.add (local.get $p6) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k6))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k6))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k6))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k6))))
            (local.set $at (i32.add (local.get $p7) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k7))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k7))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k7))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k7))))
            (local.set $at (i32.add (local.get $p8) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k8))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k8))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k8))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k8))))
            (local.set $at (i32.add (local.get $p9) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k9))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k9))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k9))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k9))))
            (local.set $at (i32.add (local.get $p10) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k10))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k10))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k10))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k10))))
            (local.set $at (i32.add (local.get $p11) (local.get $off)))
            (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k11))))
            (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k11))))
            (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k11))))
            (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k11))))
            (v128.store
              (i32.add (local.get $dst) (i32.shl (local.get $c) (i32.const 4)))
              (i8x16.narrow_i16x8_u
                (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a0) (local.get $shift)) (i32x4.shr_s (local.get $a1) (local.get $shift)))
                (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a2) (local.get $shift)) (i32x4.shr_s (local.get $a3) (local.get $shift)))))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $chunk12)))
        (return)))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $c) (local.get $chunks)))
        (local.set $off (i32.shl (local.get $c) (i32.const 6)))
        (local.set $a0 (local.get $round))
        (local.set $a1 (local.get $round))
        (local.set $a2 (local.get $round))
        (local.set $a3 (local.get $round))
        (local.set $t (i32.const 0))
        (loop $tap
          (local.set $at (i32.add (i32.load (i32.add (local.get $rows) (i32.shl (local.get $t) (i32.const 2)))) (local.get $off)))
          (local.set $k (i32x4.splat (i32.load (i32.add (local.get $taps) (i32.shl (local.get $t) (i32.const 2))))))
          (local.set $a0 (i32x4.add (local.get $a0) (i32x4.mul (v128.load (local.get $at)) (local.get $k))))
          (local.set $a1 (i32x4.add (local.get $a1) (i32x4.mul (v128.load offset=16 (local.get $at)) (local.get $k))))
          (local.set $a2 (i32x4.add (local.get $a2) (i32x4.mul (v128.load offset=32 (local.get $at)) (local.get $k))))
          (local.set $a3 (i32x4.add (local.get $a3) (i32x4.mul (v128.load offset=48 (local.get $at)) (local.get $k))))
          (local.set $t (i32.add (local.get $t) (i32.const 1)))
          (br_if $tap (i32.lt_u (local.get $t) (local.get $n))))
        (v128.store
          (i32.add (local.get $dst) (i32.shl (local.get $c) (i32.const 4)))
          (i8x16.narrow_i16x8_u
            (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a0) (local.get $shift)) (i32x4.shr_s (local.get $a1) (local.get $shift)))
            (i16x8.narrow_i32x4_s (i32x4.shr_s (local.get $a2) (local.get $shift)) (i32x4.shr_s (local.get $a3) (local.get $shift)))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $chunk))))

  ;; Colour conversion of `rows` (even) RGB byte rows, `groups` x 8 pixels each (`stride` bytes
  ;; apart, 4 bytes of slack after the last), into level-shifted Y (f32, `groups` x 8 per row) and
  ;; Cb and Cr: with `full` (4:4:4) as Y is laid out; else (4:2:0) 2x2-averaged (f32, `groups` x 4
  ;; per row pair), even rows storing the chroma pair sums and odd rows adding theirs and averaging.
  (func (export "rgbToYcc")
    (param $rgb i32) (param $stride i32) (param $groups i32) (param $rows i32)
    (param $y i32) (param $cb i32) (param $cr i32) (param $full i32)
    (local $row i32) (local $g i32) (local $p i32) (local $py i32) (local $pc i32) (local $px v128)
    (local $r1 v128) (local $g1 v128) (local $b1 v128) (local $r2 v128) (local $g2 v128) (local $b2 v128)
    (local $c1 v128) (local $c2 v128)
    (local $kyr v128) (local $kyg v128) (local $kyb v128) (local $k128 v128) (local $kbr v128) (local $kbg v128) (local $khalf v128) (local $krg v128) (local $krb v128) (local $kquarter v128) (local $mr v128) (local $mg v128) (local $mb v128)
    (local $sum v128) (local $w i32) (local $at i32) (local $odd i32)
    ;; Constants and masks in locals set before the loops: workerd's V8 builds a v128.const, or a
    ;; shuffle's mask, where it is used, inside the loop (docs/vision-decisions.md, "Constants out of
    ;; the loops"). A mask lane of 128 gives a zero byte.
    (local.set $kyr (v128.const f32x4 0.299 0.299 0.299 0.299))
    (local.set $kyg (v128.const f32x4 0.587 0.587 0.587 0.587))
    (local.set $kyb (v128.const f32x4 0.114 0.114 0.114 0.114))
    (local.set $k128 (v128.const f32x4 128 128 128 128))
    (local.set $kbr (v128.const f32x4 -0.168736 -0.168736 -0.168736 -0.168736))
    (local.set $kbg (v128.const f32x4 -0.331264 -0.331264 -0.331264 -0.331264))
    (local.set $khalf (v128.const f32x4 0.5 0.5 0.5 0.5))
    (local.set $krg (v128.const f32x4 0.418688 0.418688 0.418688 0.418688))
    (local.set $krb (v128.const f32x4 0.081312 0.081312 0.081312 0.081312))
    (local.set $kquarter (v128.const f32x4 0.25 0.25 0.25 0.25))
    (local.set $mr (v128.const i8x16 0 128 128 128 3 128 128 128 6 128 128 128 9 128 128 128))
    (local.set $mg (v128.const i8x16 1 128 128 128 4 128 128 128 7 128 128 128 10 128 128 128))
    (local.set $mb (v128.const i8x16 2 128 128 128 5 128 128 128 8 128 128 128 11 128 128 128))
    (block $done
      (loop $rowLoop
        (br_if $done (i32.ge_u (local.get $row) (local.get $rows)))
        (local.set $p (i32.add (local.get $rgb) (i32.mul (local.get $row) (local.get $stride))))
        (local.set $py (i32.add (local.get $y) (i32.shl (i32.mul (local.get $row) (local.get $groups)) (i32.const 5))))
        (local.set $pc (i32.shl (i32.mul (i32.shr_u (local.get $row) (i32.const 1)) (local.get $groups)) (i32.const 4)))
        (local.set $odd (i32.and (local.get $row) (i32.const 1)))
        (local.set $g (i32.const 0))
        (loop $groupLoop
          ;; Where the group's chroma goes at 4:4:4: the Y plane's offset of the group.
          (local.set $at (i32.sub (local.get $py) (local.get $y)))
          ;; Pixels 0..3 and 4..7 of the group: bytes -> i32 lanes -> f32. The lanes hold 0..255, so the
          ;; signed conversion (one cvtdq2ps on x64, where the unsigned one is a sequence of several)
          ;; gives the same floats (docs/vision-decisions.md, "The colour conversion's signed conversions").
          (local.set $px (v128.load (local.get $p)))
          (local.set $r1 (f32x4.convert_i32x4_s (i8x16.swizzle (local.get $px) (local.get $mr))))
          (local.set $g1 (f32x4.convert_i32x4_s (i8x16.swizzle (local.get $px) (local.get $mg))))
          (local.set $b1 (f32x4.convert_i32x4_s (i8x16.swizzle (local.get $px) (local.get $mb))))
          (local.set $px (v128.load offset=12 (local.get $p)))
          (local.set $r2 (f32x4.convert_i32x4_s (i8x16.swizzle (local.get $px) (local.get $mr))))
          (local.set $g2 (f32x4.convert_i32x4_s (i8x16.swizzle (local.get $px) (local.get $mg))))
          (local.set $b2 (f32x4.convert_i32x4_s (i8x16.swizzle (local.get $px) (local.get $mb))))
          ;; Y = 0.299 R + 0.587 G + 0.114 B - 128
          (v128.store (local.get $py) (f32x4.sub
            (f32x4.add (f32x4.add (f32x4.mul (local.get $r1) (local.get $kyr)) (f32x4.mul (local.get $g1) (local.get $kyg)))
              (f32x4.mul (local.get $b1) (local.get $kyb)))
            (local.get $k128)))
          (v128.store offset=16 (local.get $py) (f32x4.sub
            (f32x4.add (f32x4.add (f32x4.mul (local.get $r2) (local.get $kyr)) (f32x4.mul (local.get $g2) (local.get $kyg)))
              (f32x4.mul (local.get $b2) (local.get $kyb)))
            (local.get $k128)))
          ;; Cb = -0.168736 R - 0.331264 G + 0.5 B, summed over horizontal pairs.
          (local.set $c1 (f32x4.add (f32x4.add (f32x4.mul (local.get $r1) (local.get $kbr)) (f32x4.mul (local.get $g1) (local.get $kbg)))
            (f32x4.mul (local.get $b1) (local.get $khalf))))
          (local.set $c2 (f32x4.add (f32x4.add (f32x4.mul (local.get $r2) (local.get $kbr)) (f32x4.mul (local.get $g2) (local.get $kbg)))
            (f32x4.mul (local.get $b2) (local.get $khalf))))
          (if (local.get $full)
            (then
              (v128.store (i32.add (local.get $cb) (local.get $at)) (local.get $c1))
              (v128.store offset=16 (i32.add (local.get $cb) (local.get $at)) (local.get $c2)))
            (else
              (local.set $sum (f32x4.add
                (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $c1) (local.get $c2))
                (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $c1) (local.get $c2))))
              (local.set $w (i32.add (local.get $cb) (local.get $pc)))
              (if (local.get $odd)
                (then (v128.store (local.get $w) (f32x4.mul (f32x4.add (v128.load (local.get $w)) (local.get $sum)) (local.get $kquarter))))
                (else (v128.store (local.get $w) (local.get $sum))))))
          ;; Cr = 0.5 R - 0.418688 G - 0.081312 B
          (local.set $c1 (f32x4.sub (f32x4.sub (f32x4.mul (local.get $r1) (local.get $khalf)) (f32x4.mul (local.get $g1) (local.get $krg)))
            (f32x4.mul (local.get $b1) (local.get $krb))))
          (local.set $c2 (f32x4.sub (f32x4.sub (f32x4.mul (local.get $r2) (local.get $khalf)) (f32x4.mul (local.get $g2) (local.get $krg)))
            (f32x4.mul (local.get $b2) (local.get $krb))))
          (if (local.get $full)
            (then
              (v128.store (i32.add (local.get $cr) (local.get $at)) (local.get $c1))
              (v128.store offset=16 (i32.add (local.get $cr) (local.get $at)) (local.get $c2)))
            (else
              (local.set $sum (f32x4.add
                (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $c1) (local.get $c2))
                (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $c1) (local.get $c2))))
              (local.set $w (i32.add (local.get $cr) (local.get $pc)))
              (if (local.get $odd)
                (then (v128.store (local.get $w) (f32x4.mul (f32x4.add (v128.load (local.get $w)) (local.get $sum)) (local.get $kquarter))))
                (else (v128.store (local.get $w) (local.get $sum))))))
          (local.set $p (i32.add (local.get $p) (i32.const 24)))
          (local.set $py (i32.add (local.get $py) (i32.const 32)))
          (local.set $pc (i32.add (local.get $pc) (i32.const 16)))
          (local.set $g (i32.add (local.get $g) (i32.const 1)))
          (br_if $groupLoop (i32.lt_u (local.get $g) (local.get $groups))))
        (local.set $row (i32.add (local.get $row) (i32.const 1)))
        (br $rowLoop))))

  ;; In-place 8-point AAN forward DCT (the JS encoder's aan8) on four lanes at once: eight vectors
  ;; at $p, $p + $s, ..., $p + 7 $s. Scaled output; the zigzag step applies the JPEG scale.
  (func $aan8 (param $p i32) (param $s i32)
    (local $d0 v128) (local $d1 v128) (local $d2 v128) (local $d3 v128)
    (local $d4 v128) (local $d5 v128) (local $d6 v128) (local $d7 v128)
    (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
    (local $t4 v128) (local $t5 v128) (local $t6 v128) (local $t7 v128)
    (local $e10 v128) (local $e11 v128) (local $e12 v128) (local $e13 v128)
    (local $z1 v128) (local $z2 v128) (local $z3 v128) (local $z4 v128) (local $z5 v128)
    (local $z11 v128) (local $z13 v128) (local $o10 v128) (local $o11 v128) (local $o12 v128)
    (local $a1 i32) (local $a2 i32) (local $a3 i32) (local $a4 i32) (local $a5 i32) (local $a6 i32) (local $a7 i32)
    (local.set $a1 (i32.add (local.get $p) (local.get $s)))
    (local.set $a2 (i32.add (local.get $a1) (local.get $s)))
    (local.set $a3 (i32.add (local.get $a2) (local.get $s)))
    (local.set $a4 (i32.add (local.get $a3) (local.get $s)))
    (local.set $a5 (i32.add (local.get $a4) (local.get $s)))
    (local.set $a6 (i32.add (local.get $a5) (local.get $s)))
    (local.set $a7 (i32.add (local.get $a6) (local.get $s)))
    (local.set $d0 (v128.load (local.get $p)))
    (local.set $d1 (v128.load (local.get $a1)))
    (local.set $d2 (v128.load (local.get $a2)))
    (local.set $d3 (v128.load (local.get $a3)))
    (local.set $d4 (v128.load (local.get $a4)))
    (local.set $d5 (v128.load (local.get $a5)))
    (local.set $d6 (v128.load (local.get $a6)))
    (local.set $d7 (v128.load (local.get $a7)))
    (local.set $t0 (f32x4.add (local.get $d0) (local.get $d7)))
    (local.set $t7 (f32x4.sub (local.get $d0) (local.get $d7)))
    (local.set $t1 (f32x4.add (local.get $d1) (local.get $d6)))
    (local.set $t6 (f32x4.sub (local.get $d1) (local.get $d6)))
    (local.set $t2 (f32x4.add (local.get $d2) (local.get $d5)))
    (local.set $t5 (f32x4.sub (local.get $d2) (local.get $d5)))
    (local.set $t3 (f32x4.add (local.get $d3) (local.get $d4)))
    (local.set $t4 (f32x4.sub (local.get $d3) (local.get $d4)))
    (local.set $e10 (f32x4.add (local.get $t0) (local.get $t3)))
    (local.set $e13 (f32x4.sub (local.get $t0) (local.get $t3)))
    (local.set $e11 (f32x4.add (local.get $t1) (local.get $t2)))
    (local.set $e12 (f32x4.sub (local.get $t1) (local.get $t2)))
    (v128.store (local.get $p) (f32x4.add (local.get $e10) (local.get $e11)))
    (v128.store (local.get $a4) (f32x4.sub (local.get $e10) (local.get $e11)))
    (local.set $z1 (f32x4.mul (f32x4.add (local.get $e12) (local.get $e13)) (v128.const f32x4 0.7071067811865476 0.7071067811865476 0.7071067811865476 0.7071067811865476)))
    (v128.store (local.get $a2) (f32x4.add (local.get $e13) (local.get $z1)))
    (v128.store (local.get $a6) (f32x4.sub (local.get $e13) (local.get $z1)))
    (local.set $o10 (f32x4.add (local.get $t4) (local.get $t5)))
    (local.set $o11 (f32x4.add (local.get $t5) (local.get $t6)))
    (local.set $o12 (f32x4.add (local.get $t6) (local.get $t7)))
    (local.set $z5 (f32x4.mul (f32x4.sub (local.get $o10) (local.get $o12)) (v128.const f32x4 0.3826834323650898 0.3826834323650898 0.3826834323650898 0.3826834323650898)))
    (local.set $z2 (f32x4.add (f32x4.mul (local.get $o10) (v128.const f32x4 0.5411961001461969 0.5411961001461969 0.5411961001461969 0.5411961001461969)) (local.get $z5)))
    (local.set $z4 (f32x4.add (f32x4.mul (local.get $o12) (v128.const f32x4 1.3065629648763766 1.3065629648763766 1.3065629648763766 1.3065629648763766)) (local.get $z5)))
    (local.set $z3 (f32x4.mul (local.get $o11) (v128.const f32x4 0.7071067811865476 0.7071067811865476 0.7071067811865476 0.7071067811865476)))
    (local.set $z11 (f32x4.add (local.get $t7) (local.get $z3)))
    (local.set $z13 (f32x4.sub (local.get $t7) (local.get $z3)))
    (v128.store (local.get $a5) (f32x4.add (local.get $z13) (local.get $z2)))
    (v128.store (local.get $a3) (f32x4.sub (local.get $z13) (local.get $z2)))
    (v128.store (local.get $a1) (f32x4.add (local.get $z11) (local.get $z4)))
    (v128.store (local.get $a7) (f32x4.sub (local.get $z11) (local.get $z4))))

  ;; 4x4 transpose of the f32 vectors at $src, $src + $s, ... into $dst, $dst + 32, ...
  (func $transpose4 (param $src i32) (param $s i32) (param $dst i32)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128) (local $t0 v128) (local $t1 v128) (local $t2 v128) (local $t3 v128)
    (local.set $a (v128.load (local.get $src)))
    (local.set $b (v128.load (i32.add (local.get $src) (local.get $s))))
    (local.set $c (v128.load (i32.add (local.get $src) (i32.shl (local.get $s) (i32.const 1)))))
    (local.set $d (v128.load (i32.add (local.get $src) (i32.mul (local.get $s) (i32.const 3)))))
    (local.set $t0 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $a) (local.get $b)))
    (local.set $t1 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $a) (local.get $b)))
    (local.set $t2 (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $c) (local.get $d)))
    (local.set $t3 (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $c) (local.get $d)))
    (v128.store (local.get $dst) (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $t0) (local.get $t2)))
    (v128.store offset=32 (local.get $dst) (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $t0) (local.get $t2)))
    (v128.store offset=64 (local.get $dst) (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $t1) (local.get $t3)))
    (v128.store offset=96 (local.get $dst) (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $t1) (local.get $t3))))

  ;; Second DCT pass of one 8x8 block whose columns are already transformed (rows $s bytes apart
  ;; at $src): transpose into the scratch $blk (256 bytes of f32, then 128 of i16), transform, scale
  ;; each coefficient ($table: 64 f32 in the scratch's order, the JPEG scale times the
  ;; coefficients' fixed point) and floor it to i16, eight at a time (the floored float plus 1.5 x 2^23
  ;; holds the integer in its low mantissa bits, so the float's bits less the constant's are it:
  ;; exact for |x| < 2^22, and a cell is within 2^14; two instructions where i32x4.trunc_sat_f32x4_s
  ;; is a sequence of several on x64, docs/vision-decisions.md "The DCT's float-to-integer step"); then write the 64 to $out in
  ;; zigzag order. The stored value is the fixed-point cell, and the coefficient is read back as the
  ;; cell's middle (see $quantiseBlock). After the two passes coefficient (u = n % 8, v = n / 8) of
  ;; natural index n sits at u * 8 + v of the scratch, so zigzag position k reads i16 number
  ;; (n & 7) * 8 + (n >> 3) of n = JPEG's zigzag order[k]: the unrolled copy below.
  (func $finishBlock (param $src i32) (param $s i32) (param $blk i32) (param $table i32) (param $out i32)
    (local $j i32) (local $at i32) (local $scale i32)
    (call $transpose4 (local.get $src) (local.get $s) (local.get $blk))
    (call $transpose4 (i32.add (local.get $src) (i32.const 16)) (local.get $s) (i32.add (local.get $blk) (i32.const 128)))
    (call $transpose4 (i32.add (local.get $src) (i32.shl (local.get $s) (i32.const 2))) (local.get $s) (i32.add (local.get $blk) (i32.const 16)))
    (call $transpose4 (i32.add (i32.add (local.get $src) (i32.shl (local.get $s) (i32.const 2))) (i32.const 16)) (local.get $s) (i32.add (local.get $blk) (i32.const 144)))
    (call $aan8 (local.get $blk) (i32.const 32))
    (call $aan8 (i32.add (local.get $blk) (i32.const 16)) (i32.const 32))
    (local.set $at (local.get $blk))
    (local.set $scale (local.get $table))
    (loop $cells
      (v128.store offset=256 (i32.add (local.get $blk) (i32.shl (local.get $j) (i32.const 1)))
        (i16x8.narrow_i32x4_s
          (i32x4.sub (f32x4.add (f32x4.floor (f32x4.mul (v128.load (local.get $at)) (v128.load (local.get $scale)))) (v128.const f32x4 12582912 12582912 12582912 12582912)) (v128.const i32x4 0x4b400000 0x4b400000 0x4b400000 0x4b400000))
          (i32x4.sub (f32x4.add (f32x4.floor (f32x4.mul (v128.load offset=16 (local.get $at)) (v128.load offset=16 (local.get $scale)))) (v128.const f32x4 12582912 12582912 12582912 12582912)) (v128.const i32x4 0x4b400000 0x4b400000 0x4b400000 0x4b400000))))
      (local.set $at (i32.add (local.get $at) (i32.const 32)))
      (local.set $scale (i32.add (local.get $scale) (i32.const 32)))
      (local.set $j (i32.add (local.get $j) (i32.const 8)))
      (br_if $cells (i32.lt_u (local.get $j) (i32.const 64))))
    (i32.store16 offset=0 (local.get $out) (i32.load16_u offset=256 (local.get $blk))) (i32.store16 offset=2 (local.get $out) (i32.load16_u offset=272 (local.get $blk))) (i32.store16 offset=4 (local.get $out) (i32.load16_u offset=258 (local.get $blk))) (i32.store16 offset=6 (local.get $out) (i32.load16_u offset=260 (local.get $blk)))
    (i32.store16 offset=8 (local.get $out) (i32.load16_u offset=274 (local.get $blk))) (i32.store16 offset=10 (local.get $out) (i32.load16_u offset=288 (local.get $blk))) (i32.store16 offset=12 (local.get $out) (i32.load16_u offset=304 (local.get $blk))) (i32.store16 offset=14 (local.get $out) (i32.load16_u offset=290 (local.get $blk)))
    (i32.store16 offset=16 (local.get $out) (i32.load16_u offset=276 (local.get $blk))) (i32.store16 offset=18 (local.get $out) (i32.load16_u offset=262 (local.get $blk))) (i32.store16 offset=20 (local.get $out) (i32.load16_u offset=264 (local.get $blk))) (i32.store16 offset=22 (local.get $out) (i32.load16_u offset=278 (local.get $blk)))
    (i32.store16 offset=24 (local.get $out) (i32.load16_u offset=292 (local.get $blk))) (i32.store16 offset=26 (local.get $out) (i32.load16_u offset=306 (local.get $blk))) (i32.store16 offset=28 (local.get $out) (i32.load16_u offset=320 (local.get $blk))) (i32.store16 offset=30 (local.get $out) (i32.load16_u offset=336 (local.get $blk)))
    (i32.store16 offset=32 (local.get $out) (i32.load16_u offset=322 (local.get $blk))) (i32.store16 offset=34 (local.get $out) (i32.load16_u offset=308 (local.get $blk))) (i32.store16 offset=36 (local.get $out) (i32.load16_u offset=294 (local.get $blk))) (i32.store16 offset=38 (local.get $out) (i32.load16_u offset=280 (local.get $blk)))
    (i32.store16 offset=40 (local.get $out) (i32.load16_u offset=266 (local.get $blk))) (i32.store16 offset=42 (local.get $out) (i32.load16_u offset=268 (local.get $blk))) (i32.store16 offset=44 (local.get $out) (i32.load16_u offset=282 (local.get $blk))) (i32.store16 offset=46 (local.get $out) (i32.load16_u offset=296 (local.get $blk)))
    (i32.store16 offset=48 (local.get $out) (i32.load16_u offset=310 (local.get $blk))) (i32.store16 offset=50 (local.get $out) (i32.load16_u offset=324 (local.get $blk))) (i32.store16 offset=52 (local.get $out) (i32.load16_u offset=338 (local.get $blk))) (i32.store16 offset=54 (local.get $out) (i32.load16_u offset=352 (local.get $blk)))
    (i32.store16 offset=56 (local.get $out) (i32.load16_u offset=368 (local.get $blk))) (i32.store16 offset=58 (local.get $out) (i32.load16_u offset=354 (local.get $blk))) (i32.store16 offset=60 (local.get $out) (i32.load16_u offset=340 (local.get $blk))) (i32.store16 offset=62 (local.get $out) (i32.load16_u offset=326 (local.get $blk)))
    (i32.store16 offset=64 (local.get $out) (i32.load16_u offset=312 (local.get $blk))) (i32.store16 offset=66 (local.get $out) (i32.load16_u offset=298 (local.get $blk))) (i32.store16 offset=68 (local.get $out) (i32.load16_u offset=284 (local.get $blk))) (i32.store16 offset=70 (local.get $out) (i32.load16_u offset=270 (local.get $blk)))
    (i32.store16 offset=72 (local.get $out) (i32.load16_u offset=286 (local.get $blk))) (i32.store16 offset=74 (local.get $out) (i32.load16_u offset=300 (local.get $blk))) (i32.store16 offset=76 (local.get $out) (i32.load16_u offset=314 (local.get $blk))) (i32.store16 offset=78 (local.get $out) (i32.load16_u offset=328 (local.get $blk)))
    (i32.store16 offset=80 (local.get $out) (i32.load16_u offset=342 (local.get $blk))) (i32.store16 offset=82 (local.get $out) (i32.load16_u offset=356 (local.get $blk))) (i32.store16 offset=84 (local.get $out) (i32.load16_u offset=370 (local.get $blk))) (i32.store16 offset=86 (local.get $out) (i32.load16_u offset=372 (local.get $blk)))
    (i32.store16 offset=88 (local.get $out) (i32.load16_u offset=358 (local.get $blk))) (i32.store16 offset=90 (local.get $out) (i32.load16_u offset=344 (local.get $blk))) (i32.store16 offset=92 (local.get $out) (i32.load16_u offset=330 (local.get $blk))) (i32.store16 offset=94 (local.get $out) (i32.load16_u offset=316 (local.get $blk)))
    (i32.store16 offset=96 (local.get $out) (i32.load16_u offset=302 (local.get $blk))) (i32.store16 offset=98 (local.get $out) (i32.load16_u offset=318 (local.get $blk))) (i32.store16 offset=100 (local.get $out) (i32.load16_u offset=332 (local.get $blk))) (i32.store16 offset=102 (local.get $out) (i32.load16_u offset=346 (local.get $blk)))
    (i32.store16 offset=104 (local.get $out) (i32.load16_u offset=360 (local.get $blk))) (i32.store16 offset=106 (local.get $out) (i32.load16_u offset=374 (local.get $blk))) (i32.store16 offset=108 (local.get $out) (i32.load16_u offset=376 (local.get $blk))) (i32.store16 offset=110 (local.get $out) (i32.load16_u offset=362 (local.get $blk)))
    (i32.store16 offset=112 (local.get $out) (i32.load16_u offset=348 (local.get $blk))) (i32.store16 offset=114 (local.get $out) (i32.load16_u offset=334 (local.get $blk))) (i32.store16 offset=116 (local.get $out) (i32.load16_u offset=350 (local.get $blk))) (i32.store16 offset=118 (local.get $out) (i32.load16_u offset=364 (local.get $blk)))
    (i32.store16 offset=120 (local.get $out) (i32.load16_u offset=378 (local.get $blk))) (i32.store16 offset=122 (local.get $out) (i32.load16_u offset=380 (local.get $blk))) (i32.store16 offset=124 (local.get $out) (i32.load16_u offset=366 (local.get $blk))) (i32.store16 offset=126 (local.get $out) (i32.load16_u offset=382 (local.get $blk))))

  ;; DCT of one MCU row (as rgbToYcc leaves it; `mcus` MCUs wide) into `out`: for 4:2:0, 16 rows
  ;; of Y and 8 of Cb and Cr, 6 blocks of 64 i16 per MCU (Y00 Y01 Y10 Y11 Cb Cr); with `full`
  ;; (4:4:4), 8 rows of each, 3 blocks per MCU (Y Cb Cr). Zigzag order, JPEG scale in fixed point
  ;; (the table's scale says how many fractional bits). A chroma row is laid out alike in both
  ;; (`mcus` x 8 f32). The column pass runs over whole strips four columns at a time, in place; the
  ;; row pass per block.
  (func (export "dctMcuRow")
    (param $y i32) (param $cb i32) (param $cr i32) (param $mcus i32) (param $blk i32) (param $table i32) (param $out i32)
    (param $full i32)
    (local $ys i32) (local $cs i32) (local $x i32) (local $m i32) (local $at i32)
    (local.set $cs (i32.shl (local.get $mcus) (i32.const 5)))
    (local.set $ys (select (local.get $cs) (i32.shl (local.get $mcus) (i32.const 6)) (local.get $full)))
    (loop $columns
      (call $aan8 (i32.add (local.get $y) (local.get $x)) (local.get $ys))
      (if (i32.eqz (local.get $full))
        (then (call $aan8 (i32.add (i32.add (local.get $y) (i32.shl (local.get $ys) (i32.const 3))) (local.get $x)) (local.get $ys))))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (br_if $columns (i32.lt_u (local.get $x) (local.get $ys))))
    (local.set $x (i32.const 0))
    (loop $chroma
      (call $aan8 (i32.add (local.get $cb) (local.get $x)) (local.get $cs))
      (call $aan8 (i32.add (local.get $cr) (local.get $x)) (local.get $cs))
      (local.set $x (i32.add (local.get $x) (i32.const 16)))
      (br_if $chroma (i32.lt_u (local.get $x) (local.get $cs))))
    (loop $blocks
      (if (local.get $full)
        (then
          (call $finishBlock (i32.add (local.get $y) (i32.shl (local.get $m) (i32.const 5))) (local.get $ys) (local.get $blk) (local.get $table) (local.get $out))
          (local.set $out (i32.add (local.get $out) (i32.const 128))))
        (else
          (local.set $at (i32.add (local.get $y) (i32.shl (local.get $m) (i32.const 6))))
          (call $finishBlock (local.get $at) (local.get $ys) (local.get $blk) (local.get $table) (local.get $out))
          (call $finishBlock (i32.add (local.get $at) (i32.const 32)) (local.get $ys) (local.get $blk) (local.get $table) (i32.add (local.get $out) (i32.const 128)))
          (local.set $at (i32.add (local.get $at) (i32.shl (local.get $ys) (i32.const 3))))
          (call $finishBlock (local.get $at) (local.get $ys) (local.get $blk) (local.get $table) (i32.add (local.get $out) (i32.const 256)))
          (call $finishBlock (i32.add (local.get $at) (i32.const 32)) (local.get $ys) (local.get $blk) (local.get $table) (i32.add (local.get $out) (i32.const 384)))
          (local.set $out (i32.add (local.get $out) (i32.const 512)))))
      (call $finishBlock (i32.add (local.get $cb) (i32.shl (local.get $m) (i32.const 5))) (local.get $cs) (local.get $blk) (local.get $table) (local.get $out))
      (call $finishBlock (i32.add (local.get $cr) (i32.shl (local.get $m) (i32.const 5))) (local.get $cs) (local.get $blk) (local.get $table) (i32.add (local.get $out) (i32.const 128)))
      (local.set $out (i32.add (local.get $out) (i32.const 256)))
      (local.set $m (i32.add (local.get $m) (i32.const 1)))
      (br_if $blocks (i32.lt_u (local.get $m) (local.get $mcus)))))

  ;; Quantises one block: 64 i16 coefficients at $at (zigzag order, fixed-point cells) times the 64 f32
  ;; reciprocals at $r (which include the fixed point's unit), rounded half away from zero (as the
  ;; JS path), narrowed to i16 at $q. Returns the 64-bit mask of its non-zero coefficients, so zero
  ;; runs are skipped with ctz.
  (func $quantiseBlock (param $at i32) (param $r i32) (param $q i32) (result i64)
    (local $i i32) (local $mask i64) (local $c v128) (local $v0 v128) (local $v1 v128) (local $packed v128)
    (local $half v128) (local $sign v128) (local $zero v128)
    ;; Constants in locals set before the loop: workerd's V8 builds a v128.const where it is used,
    ;; inside the loop (docs/vision-decisions.md, "Constants out of the loops").
    (local.set $half (v128.const f32x4 0.5 0.5 0.5 0.5))
    (local.set $sign (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000))
    (loop $quantise
      (local.set $c (v128.load (local.get $at)))
      ;; The cell's middle: never exactly on a rounding tie of a power-of-two step, so no bias.
      (local.set $v0 (f32x4.mul (f32x4.add (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $c))) (local.get $half)) (v128.load (local.get $r))))
      (local.set $v1 (f32x4.mul (f32x4.add (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $c))) (local.get $half)) (v128.load offset=16 (local.get $r))))
      ;; v * recip + copysign(0.5, v), truncated.
      (local.set $v0 (f32x4.add (local.get $v0) (v128.or (v128.and (local.get $v0) (local.get $sign)) (local.get $half))))
      (local.set $v1 (f32x4.add (local.get $v1) (v128.or (v128.and (local.get $v1) (local.get $sign)) (local.get $half))))
      (local.set $packed (i16x8.narrow_i32x4_s (i32x4.trunc_sat_f32x4_s (local.get $v0)) (i32x4.trunc_sat_f32x4_s (local.get $v1))))
      (v128.store (i32.add (local.get $q) (i32.shl (local.get $i) (i32.const 1))) (local.get $packed))
      (local.set $mask (i64.or (local.get $mask)
        (i64.shl
          (i64.extend_i32_u (i16x8.bitmask (v128.not (i16x8.eq (local.get $packed) (local.get $zero)))))
          (i64.extend_i32_u (local.get $i)))))
      (local.set $at (i32.add (local.get $at) (i32.const 16)))
      (local.set $r (i32.add (local.get $r) (i32.const 32)))
      (local.set $i (i32.add (local.get $i) (i32.const 8)))
      (br_if $quantise (i32.lt_u (local.get $i) (i32.const 64))))
    (local.get $mask))

  ;; Squared error one quantised block adds: the 64 i16 coefficients at $at (read as their cells'
  ;; middles) against the quantised i16 at $q times the 64 f32 steps at $steps (in the same cell
  ;; unit), summed in f32 lanes per block.
  (func $blockError (param $at i32) (param $steps i32) (param $q i32) (result f64)
    (local $i i32) (local $c v128) (local $k v128) (local $d v128) (local $sum v128) (local $half v128)
    (local.set $half (v128.const f32x4 0.5 0.5 0.5 0.5))
    (loop $lanes
      (local.set $c (v128.load (local.get $at)))
      (local.set $k (v128.load (local.get $q)))
      (local.set $d (f32x4.sub
        (f32x4.add (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $c))) (local.get $half))
        (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $k))) (v128.load (local.get $steps)))))
      (local.set $sum (f32x4.add (local.get $sum) (f32x4.mul (local.get $d) (local.get $d))))
      (local.set $d (f32x4.sub
        (f32x4.add (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $c))) (local.get $half))
        (f32x4.mul (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $k))) (v128.load offset=16 (local.get $steps)))))
      (local.set $sum (f32x4.add (local.get $sum) (f32x4.mul (local.get $d) (local.get $d))))
      (local.set $at (i32.add (local.get $at) (i32.const 16)))
      (local.set $q (i32.add (local.get $q) (i32.const 16)))
      (local.set $steps (i32.add (local.get $steps) (i32.const 32)))
      (local.set $i (i32.add (local.get $i) (i32.const 8)))
      (br_if $lanes (i32.lt_u (local.get $i) (i32.const 64))))
    (f64.add
      (f64.add (f64.promote_f32 (f32x4.extract_lane 0 (local.get $sum))) (f64.promote_f32 (f32x4.extract_lane 1 (local.get $sum))))
      (f64.add (f64.promote_f32 (f32x4.extract_lane 2 (local.get $sum))) (f64.promote_f32 (f32x4.extract_lane 3 (local.get $sum))))))

  ;; Quantise-and-count of the encoder's quality search, over `mcus` MCUs at $coeffs (`luma` blocks
  ;; of Y, 4 for 4:2:0 or 1 for 4:4:4, then Cb and Cr; 64 i16 coefficients each, zigzag order), the
  ;; next window of a pass begun by scanStart: each block is quantised into the 128-byte `scratch`
  ;; ($quantiseBlock, with `recip`: 64 f32 reciprocals of the table per block slot of the MCU) and
  ;; its Huffman symbols added to `hist` (1024 u32: DC luma, AC luma, DC chroma, AC chroma). With
  ;; `steps` (not 0: 64 f32 steps per block slot, the reciprocals' inverses), the squared error each
  ;; block's quantisation adds goes to `errors` too (one f64 sum per block slot). Returns the window's
  ;; magnitude bits.
  (func (export "quantCount")
    (param $coeffs i32) (param $recip i32) (param $hist i32)
    (param $mcus i32) (param $scratch i32) (param $luma i32) (param $steps i32) (param $errors i32) (result i32)
    (local $m i32) (local $b i32) (local $q i32)
    (local $extra i32)
    (local $dc i32) (local $diff i32) (local $cat i32) (local $dcBase i32) (local $acBase i32)
    (local $k i32) (local $last i32) (local $run i32) (local $val i32) (local $mask i64) (local $at i32)
    (local.set $q (local.get $scratch))
    (block $mcuDone
      (loop $mcuLoop
        (br_if $mcuDone (i32.ge_u (local.get $m) (local.get $mcus)))
        (local.set $b (i32.const 0))
        (loop $blockLoop
          (local.set $at (i32.add (local.get $coeffs) (i32.shl (i32.add (i32.mul (local.get $m) (i32.add (local.get $luma) (i32.const 2))) (local.get $b)) (i32.const 7))))
          (local.set $mask (call $quantiseBlock
            (local.get $at)
            (i32.add (local.get $recip) (i32.shl (local.get $b) (i32.const 8)))
            (local.get $q)))
          (if (local.get $steps)
            (then
              (local.set $k (i32.add (local.get $errors) (i32.shl (local.get $b) (i32.const 3))))
              (f64.store (local.get $k) (f64.add (f64.load (local.get $k))
                (call $blockError (local.get $at) (i32.add (local.get $steps) (i32.shl (local.get $b) (i32.const 8))) (local.get $q))))))
          ;; DC: difference from the previous block of the same component.
          (local.set $dc (i32.load16_s (local.get $q)))
          (if (i32.lt_u (local.get $b) (local.get $luma))
            (then (local.set $diff (i32.sub (local.get $dc) (global.get $predY))) (global.set $predY (local.get $dc)) (local.set $dcBase (i32.const 0)))
            (else
              (local.set $dcBase (i32.const 2048))
              (if (i32.eq (local.get $b) (local.get $luma))
                (then (local.set $diff (i32.sub (local.get $dc) (global.get $predCb))) (global.set $predCb (local.get $dc)))
                (else (local.set $diff (i32.sub (local.get $dc) (global.get $predCr))) (global.set $predCr (local.get $dc))))))
          (local.set $acBase (i32.add (i32.add (local.get $hist) (local.get $dcBase)) (i32.const 1024)))
          (local.set $dcBase (i32.add (local.get $hist) (local.get $dcBase)))
          (if (i32.lt_s (local.get $diff) (i32.const 0)) (then (local.set $diff (i32.sub (i32.const 0) (local.get $diff)))))
          (local.set $cat (i32.sub (i32.const 32) (i32.clz (local.get $diff))))
          (local.set $k (i32.add (local.get $dcBase) (i32.shl (local.get $cat) (i32.const 2))))
          (i32.store (local.get $k) (i32.add (i32.load (local.get $k)) (i32.const 1)))
          (local.set $extra (i32.add (local.get $extra) (local.get $cat)))
          ;; AC: one symbol per non-zero coefficient, (run, category), ZRL for runs past 15, then EOB.
          (local.set $mask (i64.and (local.get $mask) (i64.const -2)))
          (local.set $last (i32.const 0))
          (block $acDone
            (loop $acLoop
              (br_if $acDone (i64.eqz (local.get $mask)))
              (local.set $k (i32.wrap_i64 (i64.ctz (local.get $mask))))
              (local.set $run (i32.sub (i32.sub (local.get $k) (local.get $last)) (i32.const 1)))
              (block $zrlDone
                (loop $zrl
                  (br_if $zrlDone (i32.le_s (local.get $run) (i32.const 15)))
                  (i32.store offset=960 (local.get $acBase) (i32.add (i32.load offset=960 (local.get $acBase)) (i32.const 1)))
                  (local.set $run (i32.sub (local.get $run) (i32.const 16)))
                  (br $zrl)))
              (local.set $val (i32.load16_s (i32.add (local.get $q) (i32.shl (local.get $k) (i32.const 1)))))
              (if (i32.lt_s (local.get $val) (i32.const 0)) (then (local.set $val (i32.sub (i32.const 0) (local.get $val)))))
              (local.set $cat (i32.sub (i32.const 32) (i32.clz (local.get $val))))
              (local.set $val (i32.add (local.get $acBase) (i32.shl (i32.or (i32.shl (local.get $run) (i32.const 4)) (local.get $cat)) (i32.const 2))))
              (i32.store (local.get $val) (i32.add (i32.load (local.get $val)) (i32.const 1)))
              (local.set $extra (i32.add (local.get $extra) (local.get $cat)))
              (local.set $last (local.get $k))
              (local.set $mask (i64.and (local.get $mask) (i64.sub (local.get $mask) (i64.const 1))))
              (br $acLoop)))
          (if (i32.lt_u (local.get $last) (i32.const 63))
            (then (i32.store (local.get $acBase) (i32.add (i32.load (local.get $acBase)) (i32.const 1)))))
          (local.set $b (i32.add (local.get $b) (i32.const 1)))
          (br_if $blockLoop (i32.lt_u (local.get $b) (i32.add (local.get $luma) (i32.const 2)))))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $mcuLoop)))
    (local.get $extra))

  ;; One byte of the scan at $at, with JPEG's 0xFF 0x00 stuffing.
  (func $emitByte (param $byte i32)
    (i32.store8 (global.get $at) (local.get $byte))
    (global.set $at (i32.add (global.get $at) (i32.const 1)))
    (if (i32.eq (local.get $byte) (i32.const 255))
      (then
        (i32.store8 (global.get $at) (i32.const 0))
        (global.set $at (i32.add (global.get $at) (i32.const 1))))))

  ;; Writes the 32 bits $w of the scan at $at, first byte in the top bits, and returns where the next
  ;; byte goes: in one store unless one of its bytes is 0xFF, then byte by byte with JPEG's stuffing
  ;; (a scan's bytes are rarely 0xFF).
  (func $word (param $w i32) (param $at i32) (result i32)
    (local $x i32)
    ;; A byte of $w is 0xFF where a byte of its complement is zero.
    (local.set $x (i32.xor (local.get $w) (i32.const -1)))
    (if (i32.and (i32.and (i32.sub (local.get $x) (i32.const 0x01010101)) (i32.xor (local.get $x) (i32.const -1))) (i32.const 0x80808080))
      (then
        (global.set $at (local.get $at))
        (call $emitByte (i32.shr_u (local.get $w) (i32.const 24)))
        (call $emitByte (i32.and (i32.shr_u (local.get $w) (i32.const 16)) (i32.const 255)))
        (call $emitByte (i32.and (i32.shr_u (local.get $w) (i32.const 8)) (i32.const 255)))
        (call $emitByte (i32.and (local.get $w) (i32.const 255)))
        (return (global.get $at))))
    ;; Big-endian: the first byte of the scan is the word's top byte.
    (i32.store (local.get $at) (i32.or
      (i32.or (i32.shl (local.get $w) (i32.const 24)) (i32.shl (i32.and (local.get $w) (i32.const 0xff00)) (i32.const 8)))
      (i32.or (i32.and (i32.shr_u (local.get $w) (i32.const 8)) (i32.const 0xff00)) (i32.shr_u (local.get $w) (i32.const 24)))))
    (i32.add (local.get $at) (i32.const 4)))

  ;; Entropy-coded scan of the `mcus` MCUs at $coeffs (laid out as quantCount reads them), the next window of a scan begun by scanStart,
  ;; into `out`; returns the bytes written (the bits short of a 32-bit word stay pending for the next
  ;; window or scanFlush). Each block is quantised into `scratch` as quantCount does it (same
  ;; `recip`), so no quantised copy of the image is kept. `codes`: 4 x 256 i32 entries
  ;; (code | length << 16) for DC luma, AC luma, DC chroma, AC chroma. The tables come from the same
  ;; quantisation's statistics, so every symbol has a code. The bit writer's state ($acc, $count,
  ;; $at) lives in locals for the window (each code appended: a shift, an or, an add and a compare;
  ;; every 32 bits a word out, $word) and goes back to the globals at its end: kept in the globals
  ;; through a call per code, each code waited on the last one's stores (docs/vision-decisions.md,
  ;; "The scan writer in locals").
  (func (export "writeScan")
    (param $coeffs i32) (param $recip i32) (param $scratch i32) (param $mcus i32) (param $codes i32) (param $out i32)
    (param $luma i32) (result i32)
    (local $m i32) (local $b i32) (local $q i32) (local $mask i64)
    (local $dc i32) (local $diff i32)
    (local $cat i32) (local $dcT i32) (local $acT i32) (local $k i32) (local $last i32) (local $run i32)
    (local $val i32) (local $entry i32)
    (local $acc i64) (local $count i32) (local $at i32)
    (local.set $acc (global.get $acc))
    (local.set $count (global.get $count))
    (local.set $at (local.get $out))
    (local.set $q (local.get $scratch))
    (block $mcuDone
      (loop $mcuLoop
        (br_if $mcuDone (i32.ge_u (local.get $m) (local.get $mcus)))
        (local.set $b (i32.const 0))
        (loop $blockLoop
          (local.set $mask (call $quantiseBlock
            (i32.add (local.get $coeffs) (i32.shl (i32.add (i32.mul (local.get $m) (i32.add (local.get $luma) (i32.const 2))) (local.get $b)) (i32.const 7)))
            (i32.add (local.get $recip) (i32.shl (local.get $b) (i32.const 8)))
            (local.get $q)))
          (local.set $dc (i32.load16_s (local.get $q)))
          (if (i32.lt_u (local.get $b) (local.get $luma))
            (then (local.set $diff (i32.sub (local.get $dc) (global.get $predY))) (global.set $predY (local.get $dc))
              (local.set $dcT (local.get $codes)))
            (else
              (local.set $dcT (i32.add (local.get $codes) (i32.const 2048)))
              (if (i32.eq (local.get $b) (local.get $luma))
                (then (local.set $diff (i32.sub (local.get $dc) (global.get $predCb))) (global.set $predCb (local.get $dc)))
                (else (local.set $diff (i32.sub (local.get $dc) (global.get $predCr))) (global.set $predCr (local.get $dc))))))
          (local.set $acT (i32.add (local.get $dcT) (i32.const 1024)))
          ;; Category, then the magnitude bits (negative values as value - 1, the low bits kept), in
          ;; one append: code (<= 16 bits) and magnitude (<= 11 bits).
          (local.set $val (select (i32.sub (i32.const 0) (local.get $diff)) (local.get $diff) (i32.lt_s (local.get $diff) (i32.const 0))))
          (local.set $cat (i32.sub (i32.const 32) (i32.clz (local.get $val))))
          (local.set $entry (i32.load (i32.add (local.get $dcT) (i32.shl (local.get $cat) (i32.const 2)))))
          (local.set $acc (i64.or (i64.shl (local.get $acc) (i64.extend_i32_u (i32.add (i32.shr_u (local.get $entry) (i32.const 16)) (local.get $cat)))) (i64.extend_i32_u (i32.or
              (i32.shl (i32.and (local.get $entry) (i32.const 0xffff)) (local.get $cat))
              (i32.and (i32.sub (local.get $diff) (i32.shr_u (local.get $diff) (i32.const 31))) (i32.sub (i32.shl (i32.const 1) (local.get $cat)) (i32.const 1)))))))
          (local.set $count (i32.add (local.get $count) (i32.add (i32.shr_u (local.get $entry) (i32.const 16)) (local.get $cat))))
          (if (i32.ge_u (local.get $count) (i32.const 32))
            (then
              (local.set $count (i32.sub (local.get $count) (i32.const 32)))
              (local.set $at (call $word (i32.wrap_i64 (i64.shr_u (local.get $acc) (i64.extend_i32_u (local.get $count)))) (local.get $at)))))
          (local.set $mask (i64.and (local.get $mask) (i64.const -2)))
          (local.set $last (i32.const 0))
          (block $acDone
            (loop $acLoop
              (br_if $acDone (i64.eqz (local.get $mask)))
              (local.set $k (i32.wrap_i64 (i64.ctz (local.get $mask))))
              (local.set $run (i32.sub (i32.sub (local.get $k) (local.get $last)) (i32.const 1)))
              (block $zrlDone
                (loop $zrl
                  (br_if $zrlDone (i32.le_s (local.get $run) (i32.const 15)))
                  (local.set $entry (i32.load offset=960 (local.get $acT)))
                  (local.set $acc (i64.or (i64.shl (local.get $acc) (i64.extend_i32_u (i32.shr_u (local.get $entry) (i32.const 16)))) (i64.extend_i32_u (i32.and (local.get $entry) (i32.const 0xffff)))))
                  (local.set $count (i32.add (local.get $count) (i32.shr_u (local.get $entry) (i32.const 16))))
                  (if (i32.ge_u (local.get $count) (i32.const 32))
                    (then
                      (local.set $count (i32.sub (local.get $count) (i32.const 32)))
                      (local.set $at (call $word (i32.wrap_i64 (i64.shr_u (local.get $acc) (i64.extend_i32_u (local.get $count)))) (local.get $at)))))
                  (local.set $run (i32.sub (local.get $run) (i32.const 16)))
                  (br $zrl)))
              (local.set $diff (i32.load16_s (i32.add (local.get $q) (i32.shl (local.get $k) (i32.const 1)))))
              (local.set $val (select (i32.sub (i32.const 0) (local.get $diff)) (local.get $diff) (i32.lt_s (local.get $diff) (i32.const 0))))
              (local.set $cat (i32.sub (i32.const 32) (i32.clz (local.get $val))))
              (local.set $entry (i32.load (i32.add (local.get $acT) (i32.shl (i32.or (i32.shl (local.get $run) (i32.const 4)) (local.get $cat)) (i32.const 2)))))
              ;; Code (<= 16 bits) and magnitude (<= 10 bits) in one append.
              (local.set $acc (i64.or (i64.shl (local.get $acc) (i64.extend_i32_u (i32.add (i32.shr_u (local.get $entry) (i32.const 16)) (local.get $cat)))) (i64.extend_i32_u (i32.or
                  (i32.shl (i32.and (local.get $entry) (i32.const 0xffff)) (local.get $cat))
                  (i32.and (i32.sub (local.get $diff) (i32.shr_u (local.get $diff) (i32.const 31))) (i32.sub (i32.shl (i32.const 1) (local.get $cat)) (i32.const 1)))))))
              (local.set $count (i32.add (local.get $count) (i32.add (i32.shr_u (local.get $entry) (i32.const 16)) (local.get $cat))))
              (if (i32.ge_u (local.get $count) (i32.const 32))
                (then
                  (local.set $count (i32.sub (local.get $count) (i32.const 32)))
                  (local.set $at (call $word (i32.wrap_i64 (i64.shr_u (local.get $acc) (i64.extend_i32_u (local.get $count)))) (local.get $at)))))
              (local.set $last (local.get $k))
              (local.set $mask (i64.and (local.get $mask) (i64.sub (local.get $mask) (i64.const 1))))
              (br $acLoop)))
          (if (i32.lt_u (local.get $last) (i32.const 63))
            (then
              (local.set $entry (i32.load (local.get $acT)))
              (local.set $acc (i64.or (i64.shl (local.get $acc) (i64.extend_i32_u (i32.shr_u (local.get $entry) (i32.const 16)))) (i64.extend_i32_u (i32.and (local.get $entry) (i32.const 0xffff)))))
              (local.set $count (i32.add (local.get $count) (i32.shr_u (local.get $entry) (i32.const 16))))
              (if (i32.ge_u (local.get $count) (i32.const 32))
                (then
                  (local.set $count (i32.sub (local.get $count) (i32.const 32)))
                  (local.set $at (call $word (i32.wrap_i64 (i64.shr_u (local.get $acc) (i64.extend_i32_u (local.get $count)))) (local.get $at)))))))
          (local.set $b (i32.add (local.get $b) (i32.const 1)))
          (br_if $blockLoop (i32.lt_u (local.get $b) (i32.add (local.get $luma) (i32.const 2)))))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $mcuLoop)))
    (global.set $acc (local.get $acc))
    (global.set $count (local.get $count))
    (global.set $at (local.get $at))
    (i32.sub (local.get $at) (local.get $out)))

  ;; Ends a scan: the pending bits padded with 1 bits to a whole byte, at `out`, stuffed; returns the bytes written.
  (func (export "scanFlush") (param $out i32) (result i32)
    (local $pad i32)
    (global.set $at (local.get $out))
    (local.set $pad (i32.and (i32.sub (i32.const 8) (i32.and (global.get $count) (i32.const 7))) (i32.const 7)))
    (global.set $acc (i64.or (i64.shl (global.get $acc) (i64.extend_i32_u (local.get $pad)))
      (i64.extend_i32_u (i32.sub (i32.shl (i32.const 1) (local.get $pad)) (i32.const 1)))))
    (global.set $count (i32.add (global.get $count) (local.get $pad)))
    (block $done
      (loop $bytes
        (br_if $done (i32.lt_u (global.get $count) (i32.const 8)))
        (global.set $count (i32.sub (global.get $count) (i32.const 8)))
        (call $emitByte (i32.and (i32.wrap_i64 (i64.shr_u (global.get $acc) (i64.extend_i32_u (global.get $count)))) (i32.const 255)))
        (br $bytes)))
    (global.set $acc (i64.const 0))
    (i32.sub (global.get $at) (local.get $out)))
)
