/**
 * ICC matrix/TRC ("matrix-shaper") RGB profiles to sRGB: Display P3, Adobe RGB, Generic RGB,
 * ProPhoto and any other profile that describes its colorants by rXYZ/gXYZ/bXYZ and its tone
 * curves by rTRC/gTRC/bTRC; and the lut16/lut8 (mft2/mft1) device-to-PCS tables that CMYK print
 * profiles carry. Other LUT forms (v4 mAB) are left alone (`undefined`): the pixels are then taken
 * as sRGB (or, for CMYK, as ideal inks), which is what a browser without colour management shows.
 */

/** A per-pixel transform of 8-bit RGB, in place. */
export type RgbTransform = (rgb: Uint8Array) => void;

type Curve = (v: number) => number;

/** Largest tone curve and CMYK grid we build from a file (a 17^4 grid is 1 MB of nodes). */
const MAX_CURVE_ENTRIES = 65536;
const MAX_CLUT_POINTS = 17 ** 4;

/** sRGB's D50-adapted colorants (the columns of its RGB → XYZ(D50) matrix), as its ICC profile states them. */
const SRGB_D50 = [
  [0.4360747, 0.3850649, 0.1430804],
  [0.2225045, 0.7168786, 0.0606169],
  [0.0139322, 0.0971045, 0.7141733],
];

/** Inverse of a 3x3 matrix; undefined when singular. */
function invert3(m: number[][]): number[][] | undefined {
  const at = (r: number, c: number) => m[r]![c]!;
  const [a, b, c, d, e, f, g, h, i] = [
    at(0, 0),
    at(0, 1),
    at(0, 2),
    at(1, 0),
    at(1, 1),
    at(1, 2),
    at(2, 0),
    at(2, 1),
    at(2, 2),
  ];
  const A = e * i - f * h,
    B = -(d * i - f * g),
    C = d * h - e * g;
  const det = a * A + b * B + c * C;
  if (!Number.isFinite(det) || Math.abs(det) < 1e-9) return undefined;
  return [
    [A / det, -(b * i - c * h) / det, (b * f - c * e) / det],
    [B / det, (a * i - c * g) / det, -(a * f - c * d) / det],
    [C / det, -(a * h - b * g) / det, (a * e - b * d) / det],
  ];
}

/** D50 XYZ → linear sRGB: the inverse of SRGB_D50. */
const SRGB_FROM_D50 = invert3(SRGB_D50)!;

function multiply3(x: number[][], y: number[][]): number[][] {
  return x.map((row) => [0, 1, 2].map((j) => row[0]! * y[0]![j]! + row[1]! * y[1]![j]! + row[2]! * y[2]![j]!));
}

function srgbEncode(linear: number): number {
  return linear <= 0.0031308 ? 12.92 * linear : 1.055 * linear ** (1 / 2.4) - 0.055;
}

interface Tag {
  offset: number;
  size: number;
}

/** A curve sampled at evenly spaced points over 0..1 (at least 2), linear in between. */
function sampledCurve(table: Float64Array): Curve {
  const last = table.length - 1;
  return (v) => {
    const x = v * last;
    const k = Math.min(last - 1, Math.floor(x));
    return table[k]! + (table[k + 1]! - table[k]!) * (x - k);
  };
}

/** Reads a `curv` or `para` tone curve (encoded 0..1 → linear 0..1); undefined when malformed. */
function readCurve(view: DataView, tag: Tag): Curve | undefined {
  if (tag.size < 12) return undefined;
  const type = view.getUint32(tag.offset);
  if (type === 0x63757276 /* curv */) {
    const count = view.getUint32(tag.offset + 8);
    if (count === 0) return (v) => v;
    if (count === 1) {
      const gamma = view.getUint16(tag.offset + 12) / 256;
      return (v) => v ** gamma;
    }
    if (count > MAX_CURVE_ENTRIES || 12 + 2 * count > tag.size) return undefined;
    const table = new Float64Array(count);
    for (let k = 0; k < count; k++) table[k] = view.getUint16(tag.offset + 12 + 2 * k) / 65535;
    return sampledCurve(table);
  }
  if (type === 0x70617261 /* para */) {
    const kind = view.getUint16(tag.offset + 8);
    const counts = [1, 3, 4, 5, 7];
    const n = counts[kind];
    if (n === undefined || 12 + 4 * n > tag.size) return undefined;
    const p = Array.from({ length: n }, (_, k) => view.getInt32(tag.offset + 12 + 4 * k) / 65536);
    const [g, a = 1, b = 0, c = 0, d = 0, e = 0, f = 0] = p as [number, ...number[]];
    const pow = (x: number) => (x <= 0 ? 0 : x ** g);
    switch (kind) {
      case 0:
        return (x) => pow(x);
      case 1:
        return (x) => (x >= -b / a ? pow(a * x + b) : 0);
      case 2:
        return (x) => (x >= -b / a ? pow(a * x + b) + c : c);
      case 3:
        return (x) => (x >= d ? pow(a * x + b) : c * x);
      default:
        return (x) => (x >= d ? pow(a * x + b) + e : c * x + f);
    }
  }
  return undefined;
}

function readTags(
  profile: Uint8Array,
): { view: DataView; tags: Map<string, Tag>; sig: (at: number) => string } | undefined {
  if (profile.length < 132) return undefined;
  const view = new DataView(profile.buffer, profile.byteOffset, profile.byteLength);
  const sig = (at: number) => String.fromCharCode(profile[at]!, profile[at + 1]!, profile[at + 2]!, profile[at + 3]!);
  if (sig(36) !== "acsp") return undefined;
  const count = view.getUint32(128);
  if (count > 1000 || 132 + 12 * count > profile.length) return undefined;
  const tags = new Map<string, Tag>();
  for (let k = 0; k < count; k++) {
    const at = 132 + 12 * k;
    const offset = view.getUint32(at + 4),
      size = view.getUint32(at + 8);
    if (offset + size <= profile.length) tags.set(sig(at), { offset, size });
  }
  return { view, tags, sig };
}

/** An RGB matrix/TRC profile's colorants (D50 XYZ, columns) and tone curves; undefined for anything else. */
function readMatrixShaper(profile: Uint8Array): { colorants: number[][]; curves: [Curve, Curve, Curve] } | undefined {
  const read = readTags(profile);
  if (read?.sig(16) !== "RGB " || read.sig(20) !== "XYZ ") return undefined;
  const { view, tags } = read;
  const xyz = (name: string) => {
    const tag = tags.get(name);
    if (!tag || tag.size < 20 || view.getUint32(tag.offset) !== 0x58595a20 /* 'XYZ ' */) return undefined;
    return [0, 1, 2].map((k) => view.getInt32(tag.offset + 8 + 4 * k) / 65536);
  };
  const r = xyz("rXYZ"),
    g = xyz("gXYZ"),
    b = xyz("bXYZ");
  const curve = (name: string) => {
    const tag = tags.get(name);
    return tag ? readCurve(view, tag) : undefined;
  };
  const rc = curve("rTRC"),
    gc = curve("gTRC"),
    bc = curve("bTRC");
  if (!r || !g || !b || !rc || !gc || !bc) return undefined;
  return { colorants: [0, 1, 2].map((row) => [r[row]!, g[row]!, b[row]!]), curves: [rc, gc, bc] };
}

/** Linear light → 8-bit sRGB, sampled finely enough that the look-up adds no visible step. */
const ENCODE_STEPS = 16384;
const SRGB_ENCODE = (() => {
  const table = new Uint8Array(ENCODE_STEPS + 1);
  for (let k = 0; k <= ENCODE_STEPS; k++) table[k] = Math.round(255 * srgbEncode(k / ENCODE_STEPS));
  return table;
})();

/**
 * The transform from an embedded ICC profile's RGB to sRGB (relative colorimetric, clipped to the
 * sRGB gamut, as lcms does for matrix-shaper profiles); undefined when the profile is not an RGB
 * matrix/TRC profile or already matches sRGB to within one 8-bit level.
 * @example
 * const toSrgb = iccToSrgb(jpegIccProfile(bytes));
 * if (toSrgb) toSrgb(rgb);
 */
export function iccToSrgb(profile: Uint8Array | undefined): RgbTransform | undefined {
  if (!profile) return undefined;
  const shaper = readMatrixShaper(profile);
  if (!shaper) return undefined;
  const m = multiply3(SRGB_FROM_D50, shaper.colorants);
  if (m.some((row) => row.some((v) => !Number.isFinite(v) || Math.abs(v) > 16))) return undefined;
  const decode = shaper.curves.map((curve) => {
    const table = new Float64Array(256);
    for (let v = 0; v < 256; v++) table[v] = Math.max(0, Math.min(1, curve(v / 255))) * ENCODE_STEPS;
    return table;
  }) as [Float64Array, Float64Array, Float64Array];
  // Nearly sRGB already (an sRGB profile, or one a rounding away from it): leave the pixels alone.
  const primaries = m.every((row, i) => row.every((v, j) => Math.abs(v - (i === j ? 1 : 0)) < 0.002));
  let worst = 0;
  for (const table of decode)
    for (let v = 0; v < 256; v++) worst = Math.max(worst, Math.abs(255 * srgbEncode(table[v]! / ENCODE_STEPS) - v));
  if (primaries && worst <= 1) return undefined;
  const [m00, m01, m02] = m[0]!,
    [m10, m11, m12] = m[1]!,
    [m20, m21, m22] = m[2]!;
  const [dr, dg, db] = decode;
  const enc = (x: number) => SRGB_ENCODE[x <= 0 ? 0 : x >= ENCODE_STEPS ? ENCODE_STEPS : (x + 0.5) | 0]!;
  return (rgb) => {
    for (let i = 0; i < rgb.length; i += 3) {
      const r = dr[rgb[i]!]!,
        g = dg[rgb[i + 1]!]!,
        b = db[rgb[i + 2]!]!;
      rgb[i] = enc(m00! * r + m01! * g + m02! * b);
      rgb[i + 1] = enc(m10! * r + m11! * g + m12! * b);
      rgb[i + 2] = enc(m20! * r + m21! * g + m22! * b);
    }
  };
}

/** sRGB from D50 XYZ (relative colorimetric, clipped), 8-bit, into `dst[o..o+2]`. */
export function xyzToSrgb(x: number, y: number, z: number, dst: Uint8Array, o: number): void {
  const enc = (v: number) => SRGB_ENCODE[v <= 0 ? 0 : v >= 1 ? ENCODE_STEPS : (v * ENCODE_STEPS + 0.5) | 0]!;
  dst[o] = enc(XYZ_TO_SRGB[0]! * x + XYZ_TO_SRGB[1]! * y + XYZ_TO_SRGB[2]! * z);
  dst[o + 1] = enc(XYZ_TO_SRGB[3]! * x + XYZ_TO_SRGB[4]! * y + XYZ_TO_SRGB[5]! * z);
  dst[o + 2] = enc(XYZ_TO_SRGB[6]! * x + XYZ_TO_SRGB[7]! * y + XYZ_TO_SRGB[8]! * z);
}
const XYZ_TO_SRGB = SRGB_FROM_D50.flat();

/** D50 white, the PCS's reference for Lab. */
const D50 = [0.9642, 1, 0.82491];

/** CIELAB (D50 white) to D50 XYZ. */
export function labToXyz(L: number, a: number, b: number): [number, number, number] {
  const f = (t: number) => (t > 6 / 29 ? t * t * t : 3 * (6 / 29) ** 2 * (t - 4 / 29));
  const fl = (L + 16) / 116;
  return [D50[0]! * f(fl + a / 500), D50[1]! * f(fl), D50[2]! * f(fl - b / 200)];
}

/** D50 XYZ to CIELAB (D50 white). */
export function xyzToLab(xyz: readonly number[]): [number, number, number] {
  const f = (t: number) => (t > (6 / 29) ** 3 ? Math.cbrt(t) : t / (3 * (6 / 29) ** 2) + 4 / 29);
  const [fx, fy, fz] = [0, 1, 2].map((c) => f(xyz[c]! / D50[c]!)) as [number, number, number];
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

/** Converts `pixels` 4-channel device pixels (0 = no ink) at `src[from..]` to 8-bit sRGB at `dst[to..]`. */
export type CmykTransform = (
  src: Uint8Array,
  from: number,
  dst: Uint8Array,
  to: number,
  pixels: number,
  inverted: boolean,
) => void;

/**
 * The device-to-PCS table of a CMYK print profile (A2B1, relative colorimetric, else A2B0) as a
 * transform to sRGB; undefined when the profile is not CMYK or its table is not lut16/lut8.
 */
export function cmykProfileToSrgb(profile: Uint8Array | undefined): CmykTransform | undefined {
  if (!profile) return undefined;
  const read = readTags(profile);
  if (read?.sig(16) !== "CMYK") return undefined;
  const pcs = read.sig(20);
  if (pcs !== "Lab " && pcs !== "XYZ ") return undefined;
  const { view, tags } = read;
  const tag = tags.get("A2B1") ?? tags.get("A2B0");
  if (!tag || tag.size < 52) return undefined;
  const type = view.getUint32(tag.offset);
  const wide = type === 0x6d667432; /* mft2 */
  if (!wide && type !== 0x6d667431 /* mft1 */) return undefined;
  const inputs = view.getUint8(tag.offset + 8),
    outputs = view.getUint8(tag.offset + 9),
    grid = view.getUint8(tag.offset + 10);
  if (inputs !== 4 || outputs !== 3 || grid < 2) return undefined;
  const inEntries = wide ? view.getUint16(tag.offset + 48) : 256;
  const outEntries = wide ? view.getUint16(tag.offset + 50) : 256;
  if (inEntries < 2 || outEntries < 2) return undefined;
  const unit = wide ? 2 : 1,
    max = wide ? 65535 : 255;
  let at = tag.offset + (wide ? 52 : 48);
  const clutPoints = grid ** 4;
  // The tables come from the file: bound what they may make us allocate (real CMYK grids are 9-17).
  if (clutPoints > MAX_CLUT_POINTS || inEntries > MAX_CURVE_ENTRIES || outEntries > MAX_CURVE_ENTRIES) return undefined;
  if (at + unit * (4 * inEntries + clutPoints * 3 + 3 * outEntries) > tag.offset + tag.size) return undefined;
  const value = (k: number) => (wide ? view.getUint16(k) : view.getUint8(k)) / max;
  const table = (entries: number) => {
    const t = new Float64Array(entries);
    for (let k = 0; k < entries; k++) t[k] = value(at + unit * k);
    at += unit * entries;
    return sampledCurve(t);
  };
  // Per ink value: the grid cell and the fraction inside it, through the input curve.
  const cells = [0, 1, 2, 3].map(() => inkCells(grid, table(inEntries))) as CmykGrid["cells"];
  const clutAt = at;
  at += unit * clutPoints * 3;
  const outCurves = [table(outEntries), table(outEntries), table(outEntries)];
  const legacy = wide ? 65535 / 65280 : 1;
  const [o0, o1, o2] = outCurves as [(v: number) => number, (v: number) => number, (v: number) => number];
  // Every grid node goes through the output curves and the PCS → sRGB step once; pixels then
  // interpolate encoded sRGB, which is as even as Lab at a 9-17 point grid.
  const nodes = new Float32Array(clutPoints * 3);
  const rgb = new Uint8Array(3);
  for (let n = 0; n < clutPoints; n++) {
    const v = clutAt + unit * 3 * n;
    const a = o0(value(v)),
      b = o1(value(v + unit)),
      e = o2(value(v + 2 * unit));
    if (pcs === "Lab ") {
      // Legacy Lab of lut16 (L* = 100 v·65535/65280, a*, b* = 255 v·65535/65280 − 128); lut8 without the factor.
      const [x, y, z] = labToXyz(a * 100 * legacy, b * 255 * legacy - 128, e * 255 * legacy - 128);
      xyzToSrgb(x, y, z, rgb, 0);
    } else {
      // XYZ PCS: 1.0 + 32767/32768 full scale.
      xyzToSrgb(a * (65535 / 32768), b * (65535 / 32768), e * (65535 / 32768), rgb, 0);
    }
    nodes.set(rgb, 3 * n);
  }
  return cmykGridTransform({ grid, nodes, cells });
}

/** Where an 8-bit ink value falls in a grid axis: its cell and the fraction inside it. */
export interface InkCells {
  cell: Int32Array;
  frac: Float64Array;
}

/**
 * A 4-D table of encoded sRGB nodes over the inks (C slowest, K fastest, `grid` points per axis)
 * and each ink's cell look-up: an embedded profile's CLUT or the default press model.
 */
export interface CmykGrid {
  grid: number;
  nodes: Float32Array;
  cells: [InkCells, InkCells, InkCells, InkCells];
}

/** The cells of a `grid`-point axis for ink values 0..255, through `curve` (0..1 → 0..1). */
export function inkCells(grid: number, curve: (v: number) => number = (v) => v): InkCells {
  const cell = new Int32Array(256),
    frac = new Float64Array(256);
  for (let v = 0; v < 256; v++) {
    const g = Math.max(0, Math.min(1, curve(v / 255))) * (grid - 1);
    const c = Math.min(grid - 2, Math.floor(g));
    cell[v] = c;
    frac[v] = g - c;
  }
  return { cell, frac };
}

/**
 * Pixels through a CMYK grid, interpolated as lcms does for four inputs: tetrahedral in C, M, Y on
 * the two K layers around the pixel (4 nodes each), linear between them: 8 node reads where
 * quadrilinear interpolation takes 16, a third of its time, within 0.1 dB of it against lcms.
 */
export function cmykGridTransform({ grid, nodes, cells }: CmykGrid): CmykTransform {
  const sk = 3,
    sy = grid * 3,
    sm = grid * grid * 3,
    sc = grid * grid * grid * 3;
  const [cc, cm, cy, ck] = cells;
  return (src, from, dst, to, pixels, inverted) => {
    const flip = inverted ? 255 : 0;
    for (let p = 0, i = from, o = to; p < pixels; p++, i += 4, o += 3) {
      const vc = flip ^ src[i]!,
        vm = flip ^ src[i + 1]!,
        vy = flip ^ src[i + 2]!,
        vk = flip ^ src[i + 3]!;
      const base = cc.cell[vc]! * sc + cm.cell[vm]! * sm + cy.cell[vy]! * sy + ck.cell[vk]! * sk;
      const fc = cc.frac[vc]!,
        fm = cm.frac[vm]!,
        fy = cy.frac[vy]!,
        fk = ck.frac[vk]!;
      // The tetrahedron: walk the axes from the largest fraction to the smallest.
      let a: number, b: number, c: number, s1: number, s2: number;
      if (fc >= fm) {
        if (fm >= fy) {
          a = fc;
          b = fm;
          c = fy;
          s1 = sc;
          s2 = sc + sm;
        } else if (fc >= fy) {
          a = fc;
          b = fy;
          c = fm;
          s1 = sc;
          s2 = sc + sy;
        } else {
          a = fy;
          b = fc;
          c = fm;
          s1 = sy;
          s2 = sy + sc;
        }
      } else if (fc >= fy) {
        a = fm;
        b = fc;
        c = fy;
        s1 = sm;
        s2 = sm + sc;
      } else if (fm >= fy) {
        a = fm;
        b = fy;
        c = fc;
        s1 = sm;
        s2 = sm + sy;
      } else {
        a = fy;
        b = fm;
        c = fc;
        s1 = sy;
        s2 = sy + sm;
      }
      const w0 = 1 - a,
        w1 = a - b,
        w2 = b - c,
        s3 = sc + sm + sy;
      const n0 = base,
        n1 = base + s1,
        n2 = base + s2,
        n3 = base + s3,
        lo = 1 - fk;
      for (let ch = 0; ch < 3; ch++) {
        const k0 = w0 * nodes[n0 + ch]! + w1 * nodes[n1 + ch]! + w2 * nodes[n2 + ch]! + c * nodes[n3 + ch]!;
        const k1 =
          w0 * nodes[n0 + sk + ch]! + w1 * nodes[n1 + sk + ch]! + w2 * nodes[n2 + sk + ch]! + c * nodes[n3 + sk + ch]!;
        dst[o + ch] = lo * k0 + fk * k1 + 0.5;
      }
    }
  };
}
