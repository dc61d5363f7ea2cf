/**
 * ICC matrix/TRC ("matrix-shaper") RGB profiles to sRGB: Display P3, Adobe RGB, Generic RGB,
 * ProPhoto and any other profile that describes its colorants by rXYZ/gXYZ/bXYZ and its tone
 * curves by rTRC/gTRC/bTRC. LUT-only profiles (A2B0 without colorants) and non-RGB profiles are
 * left alone (`undefined`): the pixels are then taken as sRGB, which is what a browser without
 * colour management would show.
 */

/** A per-pixel transform of 8-bit RGB, in place. */
export type RgbTransform = (rgb: Uint8Array) => void;

type Curve = (v: number) => number;

/** sRGB's D50-adapted colorants (the columns of its RGB → XYZ(D50) matrix), as its ICC profile states them. */
const SRGB_D50 = [
  [0.4360747, 0.3850649, 0.1430804],
  [0.2225045, 0.7168786, 0.0606169],
  [0.0139322, 0.0971045, 0.7141733],
];

/** Inverse of a 3x3 matrix; undefined when singular. */
function invert3(m: number[][]): number[][] | undefined {
  const at = (r: number, c: number) => m[r]![c]!;
  const [a, b, c, d, e, f, g, h, i] = [at(0, 0), at(0, 1), at(0, 2), at(1, 0), at(1, 1), at(1, 2), at(2, 0), at(2, 1), at(2, 2)];
  const A = e * i - f * h, B = -(d * i - f * g), C = d * h - e * g;
  const det = a * A + b * B + c * C;
  if (!Number.isFinite(det) || Math.abs(det) < 1e-9) return undefined;
  return [
    [A / det, -(b * i - c * h) / det, (b * f - c * e) / det],
    [B / det, (a * i - c * g) / det, -(a * f - c * d) / det],
    [C / det, -(a * h - b * g) / det, (a * e - b * d) / det],
  ];
}

function multiply3(x: number[][], y: number[][]): number[][] {
  return x.map((row) => [0, 1, 2].map((j) => row[0]! * y[0]![j]! + row[1]! * y[1]![j]! + row[2]! * y[2]![j]!));
}

function srgbEncode(linear: number): number {
  return linear <= 0.0031308 ? 12.92 * linear : 1.055 * Math.pow(linear, 1 / 2.4) - 0.055;
}

interface Tag {
  offset: number;
  size: number;
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
      return (v) => Math.pow(v, gamma);
    }
    if (12 + 2 * count > tag.size) return undefined;
    const table = new Float64Array(count);
    for (let k = 0; k < count; k++) table[k] = view.getUint16(tag.offset + 12 + 2 * k) / 65535;
    return (v) => {
      const x = v * (count - 1);
      const k = Math.min(count - 2, Math.floor(x));
      return table[k]! + (table[k + 1]! - table[k]!) * (x - k);
    };
  }
  if (type === 0x70617261 /* para */) {
    const kind = view.getUint16(tag.offset + 8);
    const counts = [1, 3, 4, 5, 7];
    const n = counts[kind];
    if (n === undefined || 12 + 4 * n > tag.size) return undefined;
    const p = Array.from({ length: n }, (_, k) => view.getInt32(tag.offset + 12 + 4 * k) / 65536);
    const [g, a = 1, b = 0, c = 0, d = 0, e = 0, f = 0] = p as [number, ...number[]];
    const pow = (x: number) => (x <= 0 ? 0 : Math.pow(x, g));
    switch (kind) {
      case 0: return (x) => pow(x);
      case 1: return (x) => (x >= -b / a ? pow(a * x + b) : 0);
      case 2: return (x) => (x >= -b / a ? pow(a * x + b) + c : c);
      case 3: return (x) => (x >= d ? pow(a * x + b) : c * x);
      default: return (x) => (x >= d ? pow(a * x + b) + e : c * x + f);
    }
  }
  return undefined;
}

/** An RGB matrix/TRC profile's colorants (D50 XYZ, columns) and tone curves; undefined for anything else. */
function readMatrixShaper(profile: Uint8Array): { colorants: number[][]; curves: [Curve, Curve, Curve] } | undefined {
  if (profile.length < 132) return undefined;
  const view = new DataView(profile.buffer, profile.byteOffset, profile.byteLength);
  const sig = (at: number) => String.fromCharCode(profile[at]!, profile[at + 1]!, profile[at + 2]!, profile[at + 3]!);
  if (sig(36) !== "acsp" || sig(16) !== "RGB " || sig(20) !== "XYZ ") return undefined;
  const count = view.getUint32(128);
  if (count > 1000 || 132 + 12 * count > profile.length) return undefined;
  const tags = new Map<string, Tag>();
  for (let k = 0; k < count; k++) {
    const at = 132 + 12 * k;
    const offset = view.getUint32(at + 4), size = view.getUint32(at + 8);
    if (offset + size <= profile.length) tags.set(sig(at), { offset, size });
  }
  const xyz = (name: string) => {
    const tag = tags.get(name);
    if (!tag || tag.size < 20 || view.getUint32(tag.offset) !== 0x58595a20 /* 'XYZ ' */) return undefined;
    return [0, 1, 2].map((k) => view.getInt32(tag.offset + 8 + 4 * k) / 65536);
  };
  const r = xyz("rXYZ"), g = xyz("gXYZ"), b = xyz("bXYZ");
  const curve = (name: string) => { const tag = tags.get(name); return tag ? readCurve(view, tag) : undefined; };
  const rc = curve("rTRC"), gc = curve("gTRC"), bc = curve("bTRC");
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
  const toSrgb = invert3(SRGB_D50);
  if (!toSrgb) return undefined;
  const m = multiply3(toSrgb, shaper.colorants);
  if (m.some((row) => row.some((v) => !Number.isFinite(v) || Math.abs(v) > 16))) return undefined;
  const decode = shaper.curves.map((curve) => {
    const table = new Float64Array(256);
    for (let v = 0; v < 256; v++) table[v] = Math.max(0, Math.min(1, curve(v / 255))) * ENCODE_STEPS;
    return table;
  }) as [Float64Array, Float64Array, Float64Array];
  // Nearly sRGB already (an sRGB profile, or one a rounding away from it): leave the pixels alone.
  const primaries = m.every((row, i) => row.every((v, j) => Math.abs(v - (i === j ? 1 : 0)) < 0.002));
  let worst = 0;
  for (const table of decode) for (let v = 0; v < 256; v++) worst = Math.max(worst, Math.abs(255 * srgbEncode(table[v]! / ENCODE_STEPS) - v));
  if (primaries && worst <= 1) return undefined;
  const [m00, m01, m02] = m[0]!, [m10, m11, m12] = m[1]!, [m20, m21, m22] = m[2]!;
  const [dr, dg, db] = decode;
  const enc = (x: number) => SRGB_ENCODE[x <= 0 ? 0 : x >= ENCODE_STEPS ? ENCODE_STEPS : (x + 0.5) | 0]!;
  return (rgb) => {
    for (let i = 0; i < rgb.length; i += 3) {
      const r = dr[rgb[i]!]!, g = dg[rgb[i + 1]!]!, b = db[rgb[i + 2]!]!;
      rgb[i] = enc(m00! * r + m01! * g + m02! * b);
      rgb[i + 1] = enc(m10! * r + m11! * g + m12! * b);
      rgb[i + 2] = enc(m20! * r + m21! * g + m22! * b);
    }
  };
}
