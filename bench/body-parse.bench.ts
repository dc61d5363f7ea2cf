/**
 * What parsing a large request body holds (shared/http/body.ts `parseJsonText`): the heap a 32 MB
 * body of 100 base64 images adds once parsed (the text itself not counted), and the time, with
 * plain JSON.parse side by side. Node's V8, the engine workerd and Deno run; the isolate figures of
 * the proxy's 32 MB request are in the proxy bench.
 * Run: npm run bench -- body-parse
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseJsonText } from "../shared/http/body";
import { median, ms } from "./stats";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  // Heap figures need a collection before each reading: run again with --expose-gc.
  const again = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", process.argv[1]!], { stdio: "inherit" });
  process.exit(again.status ?? 1);
}

const images = Array.from({ length: 100 }, () => randomBytes(240_000).toString("base64"));
const text = JSON.stringify({
  model: "claude-sonnet-4-5",
  max_tokens: 64,
  messages: images.map((data, i) => ({
    role: "user",
    content: [
      { type: "text", text: `screenshot ${i}` },
      { type: "image", source: { type: "base64", media_type: "image/png", data } },
    ],
  })),
});

/** The parsed values, kept reachable until each heap reading is taken. */
const kept: unknown[] = [];

function measure(parse: (text: string) => unknown): { heapMb: number; ms: number } {
  const heaps: number[] = [];
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    kept.length = 0;
    gc!();
    const before = process.memoryUsage().heapUsed;
    const start = performance.now();
    kept.push(parse(text));
    times.push(performance.now() - start);
    gc!();
    heaps.push((process.memoryUsage().heapUsed - before) / 1e6);
  }
  kept.length = 0;
  return { heapMb: median(heaps), ms: median(times) };
}

const plain = measure((t) => JSON.parse(t));
const ours = measure((t) => parseJsonText(t));
console.log(
  [
    `A body of ${(text.length / 1e6).toFixed(1)} MB: 100 base64 images of 320 KB; median of 5 parses, the heap read after a collection.`,
    "",
    "| parse | heap added MB | ms |",
    "|---|---:|---:|",
    `| JSON.parse | ${plain.heapMb.toFixed(1)} | ${ms(plain.ms)} |`,
    `| parseJsonText (long strings left as slices of the text, depth and Unicode checks) | ${ours.heapMb.toFixed(1)} | ${ms(ours.ms)} |`,
  ].join("\n"),
);
