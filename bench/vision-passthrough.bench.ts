/**
 * What the pass-through verification costs (issue #9, "nothing unverified is passed through"): for
 * small images that already fit the budget, inside workerd (the bench Worker), the fit with its
 * verification (PNG CRCs + the whole zlib stream, JPEG walked to EOI + entropy-decoded at 1/8, GIF
 * LZW, WebP RIFF/chunk sizes and frame headers) side by side with reading the header alone (what a pass-through
 * cost before) and with a decode and re-encode of the same image (a region of the whole image but
 * its last row, since a whole-image region is no region: what the fit costs when it cannot pass through). Production codecs (SIMD, baseline encoder).
 * Round trips on loopback carry the same upload in every column, so the difference of the first
 * two is the check. The least of 25 round trips after a warm-up: on a shared machine the minimum is
 * the steadiest estimate of CPU-bound work (medians moved by tens of ms between runs).
 * Part of `npm run bench -- vision`; alone: `npm run bench -- vision-passthrough`.
 */
import sharp from "sharp";
import { startWorker } from "./vision-worker/start";
import { photoPixels, screenshotPixels } from "../test/fixtures/images";

const RUNS = 25;
const BUDGET = 262_144;

async function roundTrip(
  url: string,
  query: string,
  bytes: Uint8Array,
): Promise<{ ms: number; fit?: { passedThrough: boolean } }> {
  const started = performance.now();
  const response = await fetch(`${url}/?budget=${BUDGET}${query}`, {
    method: "POST",
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  const body = await response.arrayBuffer();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`worker answered ${response.status}: ${new TextDecoder().decode(body)}`);
  const fit = response.headers.get("x-fit");
  return { ms, fit: fit ? JSON.parse(fit) : undefined };
}

async function timed(url: string, query: string, bytes: Uint8Array): Promise<number> {
  await roundTrip(url, query, bytes); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push((await roundTrip(url, query, bytes)).ms);
  return Math.min(...times);
}

async function main() {
  const raw = (rgb: Uint8Array, width: number, height: number) =>
    sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
  const inputs: Array<[string, Uint8Array]> = [
    [
      "screenshot PNG 1280x800",
      new Uint8Array(await raw(screenshotPixels(1280, 800), 1280, 800).png({ adaptiveFiltering: true }).toBuffer()),
    ],
    [
      "screenshot PNG 800x500, palette",
      new Uint8Array(await raw(screenshotPixels(800, 500), 800, 500).png({ palette: true }).toBuffer()),
    ],
    [
      "photo JPEG 1024x768 q85",
      new Uint8Array(await raw(photoPixels(1024, 768), 1024, 768).jpeg({ quality: 85 }).toBuffer()),
    ],
    ["screenshot GIF 800x500", new Uint8Array(await raw(screenshotPixels(800, 500), 800, 500).gif().toBuffer())],
    [
      "screenshot WebP 1280x800 lossless",
      new Uint8Array(await raw(screenshotPixels(1280, 800), 1280, 800).webp({ lossless: true }).toBuffer()),
    ],
    [
      "photo WebP 1024x768 q80",
      new Uint8Array(await raw(photoPixels(1024, 768), 1024, 768).webp({ quality: 80 }).toBuffer()),
    ],
  ];
  const worker = await startWorker();
  const lines = [
    "| input | KB | header only ms (before) | pass-through with verification ms | verification cost ms | decode + re-encode ms | verification / re-encode |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  try {
    for (const [name, bytes] of inputs) {
      const check = await roundTrip(worker.url, "", bytes);
      if (!check.fit?.passedThrough)
        throw new Error(`${name} does not pass through at ${BUDGET} bytes; make it smaller`);
      const headerMs = await timed(worker.url, "&mode=header", bytes);
      const passMs = await timed(worker.url, "", bytes);
      const fitMs = await timed(worker.url, "&region=full", bytes);
      const cost = passMs - headerMs;
      lines.push(
        `| ${name} | ${(bytes.length / 1024).toFixed(1)} | ${headerMs.toFixed(1)} | ${passMs.toFixed(1)} | ${cost.toFixed(1)} | ${fitMs.toFixed(1)} | ${(cost / fitMs).toFixed(2)}x |`,
      );
    }
  } finally {
    worker.stop();
  }
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
