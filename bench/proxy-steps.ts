/**
 * What each CPU step of the proxy's path costs in workerd on a computer-use turn's body (turn 40:
 * 40 screenshots, about 4.7 MB; bench/computer-use-session.ts), timed from outside: a bench Worker
 * (bench/proxy-steps-worker) under `wrangler dev` holds the body and runs one step K times per
 * request; the step's cost is (the request's time - the empty step's) / K, median of ROUNDS
 * interleaved rounds. A sampling profile (bench/proxy-profile.ts) spreads native time over the
 * JavaScript around it and charges the inspector's own work to console calls; this does neither.
 * Run: npx tsx bench/proxy-steps.ts   (PROXY_STEPS_K, PROXY_STEPS_ROUNDS; PROXY_STEPS_ONLY=a,b runs
 * only those steps beside the empty one)
 */
import { execSync } from "node:child_process";
import { startBenchWorker } from "./bare-worker/start";
import { LAST_TURN, screenshot, turnBody } from "./computer-use-session";

const K = Number(process.env.PROXY_STEPS_K ?? 10);
const ROUNDS = Number(process.env.PROXY_STEPS_ROUNDS ?? 25);
const ALL_STEPS = [
  "none",
  "decode",
  "parse",
  "parse-seen",
  "seen-lookups",
  "seen-lookups-slice",
  "lookups-map",
  "lookups-twice",
  "lookups-once",
  "json-parse",
  "control-check",
  "memo-lookup",
  "encode",
  "encode-checked",
  "text-encode",
  "new-key",
  "new-memory-set",
  "new-b64-decode",
  "new-to-base64",
  "new-store-json",
  "native-to-base64",
  "native-from-base64",
];
const ONLY = process.env.PROXY_STEPS_ONLY?.split(",");
const STEPS = ONLY ? ["none", ...ONLY.filter((step) => ALL_STEPS.includes(step))] : ALL_STEPS;

async function main() {
  const worker = await startBenchWorker("bench/proxy-steps-worker/wrangler.toml");
  const url = worker.url;
  try {
    const shots: string[] = [];
    for (let i = 0; i < LAST_TURN; i++) shots.push(await screenshot(4000 + i, i % 2 === 1));
    const body = turnBody("steps: book the cheapest flight", shots, LAST_TURN, false);
    await (await fetch(`${url}/body`, { method: "POST", body })).text();
    const times: Record<string, number[]> = Object.fromEntries(STEPS.map((step) => [step, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const step of [...STEPS].sort(() => Math.random() - 0.5)) {
        const start = performance.now();
        await (await fetch(`${url}/?step=${step}&k=${K}`)).text();
        times[step]!.push(performance.now() - start);
      }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const floor = median(times.none!);
    console.log(
      `body ${(body.length / 1e6).toFixed(2)} MB, ${K} runs per request, median of ${ROUNDS} rounds; load average ${execSync("cat /proc/loadavg").toString().split(" ").slice(0, 3).join(" ")}`,
    );
    console.log("| step | ms per turn body |\n|---|---:|");
    for (const step of STEPS.slice(1)) console.log(`| ${step} | ${((median(times[step]!) - floor) / K).toFixed(2)} |`);
  } finally {
    worker.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
