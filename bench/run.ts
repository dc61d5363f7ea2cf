/**
 * `npm run bench`: runs every benchmark in bench/ one after another and prints their tables
 * (markdown, ready for docs/benchmarks.md). Benchmarks are not tests: they report, they do not
 * pass or fail on timings, with two exceptions: `extract` fails (exit 1) when the reader's quality
 * floor breaks (recall < 95 % or precision < 97 % on a page), and `gate` when a crafted URL's
 * secret scan takes over 2x a plain one's (the ratio the test suite no longer times). Pass names
 * to run a subset:
 * `npm run bench -- extract gate`.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

const wanted = process.argv.slice(2);
const benches = readdirSync("bench")
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.startsWith(name)))
  .sort();

let failed = 0;
for (const file of benches) {
  console.log(`\n## ${file}\n`);
  const result = spawnSync("npx", ["tsx", `bench/${file}`], {
    stdio: "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (result.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
