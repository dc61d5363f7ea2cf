/**
 * What a `Map` keyed by a long string costs a lookup in workerd (docs/speed.md, "The image
 * lookups"): the bench Worker (bench/string-keys-worker) under `wrangler dev` runs one mode `reps`
 * times a request, timed from outside (the isolate's clocks stand still while it computes); µs a
 * lookup, median of ROUNDS interleaved rounds, at texts of 10,000 to 116,000 characters (V8 hashes
 * a string over 16,383 characters by its length alone).
 * Run: npx tsx bench/string-keys.ts   (STRING_KEYS_ROUNDS, default 5)
 */
import { execSync } from "node:child_process";
import { startBenchWorker } from "./bare-worker/start";

const ROUNDS = Number(process.env.STRING_KEYS_ROUNDS ?? 5);
const MODES = ["slice", "eq", "eq-same", "map", "map-same", "new-map", "new-map-other"];
const LENGTHS = [10_000, 16_000, 17_000, 116_000];

async function main() {
  const worker = await startBenchWorker("bench/string-keys-worker/wrangler.toml");
  try {
    console.log(
      `µs a lookup, median of ${ROUNDS} rounds; load average ${execSync("cat /proc/loadavg").toString().split(" ").slice(0, 3).join(" ")}`,
    );
    console.log(`| characters | ${MODES.join(" | ")} |\n|---:|${MODES.map(() => "---:").join("|")}|`);
    for (const n of LENGTHS) {
      const reps = Math.floor(1e9 / n);
      const times: Record<string, number[]> = Object.fromEntries(MODES.map((mode) => [mode, []]));
      for (let round = 0; round < ROUNDS; round++)
        for (const mode of [...MODES].sort(() => Math.random() - 0.5)) {
          const start = performance.now();
          await (await fetch(`${worker.url}/?n=${n}&reps=${reps}&mode=${mode}`)).text();
          times[mode]!.push(((performance.now() - start) * 1000) / reps);
        }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
      console.log(`| ${n} | ${MODES.map((mode) => median(times[mode]!).toFixed(2)).join(" | ")} |`);
    }
  } finally {
    worker.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
