/**
 * CMYK (and YCCK, which the JPEG decoder turns into CMYK) to RGB for print-ready JPEGs: through the
 * file's own CMYK profile when it embeds one we can read (icc.ts), else through our model of a
 * standard offset press (FOGRA39, ISO 12647-2 coated): an untagged file's separations were made
 * for some press, and ideal inks (what browsers fall back to) come out far too light and clean.
 */
import {
  cmykGridTransform,
  cmykProfileToSrgb,
  inkCells,
  labToXyz,
  xyzToLab,
  xyzToSrgb,
  type CmykGrid,
  type CmykTransform,
} from "./icc";

/** The converter for a file's embedded profile (or none): profile tables first, the press model otherwise. */
export function cmykConverter(profile: Uint8Array | undefined): CmykTransform {
  return cmykProfileToSrgb(profile) ?? pressTransform();
}

/** The press model's transform: it depends on constants only, so it is built once per isolate, when first needed. */
let pressModel: CmykTransform | undefined;
const pressTransform = (): CmykTransform => (pressModel ??= cmykGridTransform(pressGrid()));

/**
 * The press condition untagged CMYK is taken to be printed on: FOGRA39, offset on gloss-coated
 * paper to ISO 12647-2:2004/Amd 1 (paper type 1, the condition of "ISO Coated v2" and "Coated
 * FOGRA39", the usual European default). CIELAB (D50, 2°) aims of the Ugra/Fogra Media Wedge CMYK
 * V3 patches, as Fogra publishes them as a subset of its FOGRA39 characterization data (February
 * 2012; www.fogra.org, "Fogra characterization data", the MW3 subsets, as transcribed in
 * github.com/CoverBuilder/MediaWedger Data/Medienkeil3_Sollwerte_CSV/FOGRA39.csv): paper, solids,
 * overprints and the single-ink tint ramps. Keys: percent of C, M, Y, K.
 */
export const FOGRA39_WEDGE: Readonly<Record<string, readonly [number, number, number]>> = {
  "0,0,0,0": [95, 0, -2],
  "100,0,0,0": [55, -37, -50],
  "0,100,0,0": [48, 74, -3],
  "0,0,100,0": [89, -5, 93],
  "0,0,0,100": [16, 0, 0],
  "100,100,0,0": [24, 22, -46],
  "100,0,100,0": [50, -65, 27],
  "0,100,100,0": [47, 68, 48],
  "100,100,100,0": [23, 0, 0],
  "100,0,0,100": [10.41, -8.2, -10.25],
  "0,100,0,100": [10.42, 13.93, 1.35],
  "0,0,100,100": [15.71, -3.08, 11.68],
  "10,0,0,0": [91.48, -2.97, -6.96],
  "20,0,0,0": [87.68, -5.78, -11.8],
  "40,0,0,0": [79.72, -12.53, -21.75],
  "70,0,0,0": [66.86, -24.73, -37.1],
  "0,10,0,0": [90.67, 5.9, -3.86],
  "0,20,0,0": [86.18, 12.01, -5.21],
  "0,40,0,0": [76.42, 25.78, -6.91],
  "0,70,0,0": [60.84, 50.59, -6.74],
  "0,0,10,0": [94.34, -0.94, 5.42],
  "0,0,20,0": [93.62, -1.62, 13.27],
  "0,0,40,0": [92.19, -3.47, 31.15],
  "0,0,70,0": [90.34, -4.7, 62.56],
  "0,0,0,10": [88.97, 0, -1.85],
  "0,0,0,20": [82.79, 0, -1.69],
  "0,0,0,40": [69.28, 0, -1.35],
  "0,0,0,60": [54.14, 0, -0.97],
  "0,0,0,80": [36.62, 0, -0.52],
};

/**
 * Yule–Nielsen n (light scattered inside the paper under a dot's edge darkens a halftone beyond its
 * area). 1.7 is the value at which this model, with the tint curves below, comes closest to the
 * wedge's own 72 patches (mean ΔE*ab 1.6, worst 5.0; n = 1.5 and 2 give 1.64 and 1.68).
 */
const YULE_NIELSEN_N = 1.7;

/** Grid points per ink: 17 keeps the interpolation within about one 8-bit level of the model. */
const PRESS_GRID = 17;

type Lab = readonly [number, number, number];
type Press = Readonly<Record<string, Lab>>;

/** D50 XYZ over the paper's: the paper is 1 (it becomes the PCS white: relative colorimetric). */
function reflectance(press: Press, inks: string): number[] {
  const paper = labToXyz(...press["0,0,0,0"]!);
  return labToXyz(...press[inks]!).map((v, c) => v / paper[c]!);
}

/**
 * The 16 Neugebauer primaries (bit 8 = C, 4 = M, 2 = Y, 1 = K) as reflectance factors. The wedge
 * holds paper, the solids, the two- and three-colour overprints and each chromatic ink with K;
 * the rest (two or three colours with K) are their colour overprint times what K lets through
 * over each of those inks (the wedge's ink + K over the ink alone), geometric mean over the inks.
 */
function neugebauerPrimaries(press: Press): Float64Array {
  const names = ["100,0,0,0", "0,100,0,0", "0,0,100,0"];
  const solid = (n: number) =>
    reflectance(press, `${n & 8 ? 100 : 0},${n & 4 ? 100 : 0},${n & 2 ? 100 : 0},${n & 1 ? 100 : 0}`);
  const kOver = names.map((name, i) => {
    const ink = reflectance(press, name),
      withK = reflectance(press, name.replace(/0$/, "100"));
    return { bit: 8 >> i, pass: withK.map((v, c) => v / ink[c]!) };
  });
  const primaries = new Float64Array(16 * 3);
  for (let n = 0; n < 16; n++) {
    const colours = kOver.filter(({ bit }) => n & bit);
    if (!(n & 1) || colours.length < 2) {
      primaries.set(solid(n), 3 * n);
      continue;
    }
    const overprint = solid(n & 14);
    primaries.set(
      overprint.map((v, c) => v * colours.reduce((p, { pass }) => p * pass[c]!, 1) ** (1 / colours.length)),
      3 * n,
    );
  }
  return primaries;
}

/**
 * The Yule–Nielsen modified Neugebauer sum: `rooted` are the primaries to the power 1/n, `area`
 * the four effective ink coverages 0..1 (Demichel weights); D50 XYZ relative to the paper.
 */
function neugebauer(rooted: Float64Array, area: readonly number[], out: number[]): void {
  const [c, m, y, k] = area as [number, number, number, number];
  out[0] = out[1] = out[2] = 0;
  for (let n = 0; n < 16; n++) {
    const w = (n & 8 ? c : 1 - c) * (n & 4 ? m : 1 - m) * (n & 2 ? y : 1 - y) * (n & 1 ? k : 1 - k);
    if (w === 0) continue;
    out[0] += w * rooted[3 * n]!;
    out[1] += w * rooted[3 * n + 1]!;
    out[2] += w * rooted[3 * n + 2]!;
  }
  for (let ch = 0; ch < 3; ch++) out[ch] = out[ch]! ** YULE_NIELSEN_N;
}

/**
 * Each ink's effective coverage (dot gain) as a curve of its nominal value 0..1: at every tint the
 * wedge publishes, the coverage whose model colour is closest (ΔE*ab) to the published one;
 * linear in between.
 */
function tintCurves(press: Press, rooted: Float64Array): ((v: number) => number)[] {
  const paper = labToXyz(...press["0,0,0,0"]!);
  const xyz = [0, 0, 0];
  return [0, 1, 2, 3].map((ink) => {
    const points: [number, number][] = [
      [0, 0],
      [1, 1],
    ];
    for (const [key, lab] of Object.entries(press)) {
      const inks = key.split(",").map(Number);
      const tint = inks[ink]!;
      if (tint === 0 || tint === 100 || inks.some((v, i) => i !== ink && v !== 0)) continue;
      const error = (a: number) => {
        const area = [0, 0, 0, 0];
        area[ink] = a;
        neugebauer(rooted, area, xyz);
        const [L, A, B] = xyzToLab(xyz.map((v, c) => v * paper[c]!));
        return Math.hypot(L - lab[0], A - lab[1], B - lab[2]);
      };
      let lo = 0,
        hi = 1;
      for (let step = 0; step < 60; step++) {
        const a = lo + (hi - lo) / 3,
          b = hi - (hi - lo) / 3;
        if (error(a) < error(b)) hi = b;
        else lo = a;
      }
      points.push([tint / 100, (lo + hi) / 2]);
    }
    points.sort((a, b) => a[0] - b[0]);
    return (v: number) => {
      let k = 1;
      while (k < points.length - 1 && v > points[k]![0]) k++;
      const [x0, y0] = points[k - 1]!,
        [x1, y1] = points[k]!;
      return y0 + ((y1 - y0) * (v - x0)) / (x1 - x0);
    };
  });
}

/**
 * The press model as a CMYK grid, the same shape as an embedded profile's: each ink's tint curve
 * (nominal → effective coverage) as the input curve, and at each node, evenly spaced in effective
 * coverage, the Yule–Nielsen modified Neugebauer colour relative to the paper, to sRGB (Bradford
 * to D65, clipped to the gamut, encoded).
 */
function pressGrid(): CmykGrid {
  const press = FOGRA39_WEDGE,
    grid = PRESS_GRID;
  const rooted = neugebauerPrimaries(press).map((v) => v ** (1 / YULE_NIELSEN_N));
  const white = labToXyz(100, 0, 0);
  const nodes = new Float32Array(grid ** 4 * 3);
  const rgb = new Uint8Array(3),
    xyz = [0, 0, 0],
    area = [0, 0, 0, 0];
  const step = 1 / (grid - 1);
  let at = 0;
  for (let c = 0; c < grid; c++) {
    for (let m = 0; m < grid; m++) {
      for (let y = 0; y < grid; y++) {
        for (let k = 0; k < grid; k++) {
          area[0] = c * step;
          area[1] = m * step;
          area[2] = y * step;
          area[3] = k * step;
          neugebauer(rooted, area, xyz);
          xyzToSrgb(xyz[0]! * white[0]!, xyz[1]! * white[1]!, xyz[2]! * white[2]!, rgb, 0);
          nodes[at++] = rgb[0]!;
          nodes[at++] = rgb[1]!;
          nodes[at++] = rgb[2]!;
        }
      }
    }
  }
  const curves = tintCurves(press, rooted);
  return { grid, nodes, cells: curves.map((curve) => inkCells(grid, curve)) as CmykGrid["cells"] };
}
