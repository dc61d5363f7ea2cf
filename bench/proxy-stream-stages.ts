/**
 * What each JavaScript stream stage between the provider's answer and the caller costs a streamed
 * answer in workerd (docs/speed.md, "A computer-use turn through the proxy"): the bench Worker
 * bench/proxy-stream-worker under `wrangler dev` forwards a streamed Messages request to the LLM
 * emulator (a pause of PROXY_STAGES_PAUSE ms, default 5, between events) and relays the answer
 * natively, through one pulling stream, through two, or through an identity TransformStream, the
 * relays in a random order per round. Per relay: the first event's p50 (ms from the request) and
 * the workerd CPU of the whole answer (every workerd process of the Worker, Linux /proc).
 * Run: npx tsx bench/proxy-stream-stages.ts   (PROXY_STAGES_ROUNDS, default 60)
 */
import { loadavg } from "node:os";
import { startBenchWorker } from "./bare-worker/start";
import { answerTimes, median } from "./stats";
import { workerdCpuMs } from "./workerd-processes";
import { startEmulator } from "../test/emulator/server";

const RELAYS = ["native", "one", "two", "transform"] as const;
const rounds = Number(process.env.PROXY_STAGES_ROUNDS ?? 60);
const pause = Number(process.env.PROXY_STAGES_PAUSE ?? 5);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

const emulator = await startEmulator();
const worker = await startBenchWorker("bench/proxy-stream-worker/wrangler.toml", {
  UPSTREAM: `${emulator.url}/llm/anthropic`,
});
const body = JSON.stringify({
  model: "claude-sonnet-4-5",
  max_tokens: 64,
  stream: true,
  messages: [{ role: "user", content: `[slowstream:${pause}] say something` }],
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The first event's ms and the answer's workerd CPU ms, through `relay`. */
async function timed(relay: string): Promise<{ first: number; cpu: number }> {
  await settle();
  const cpu = workerdCpuMs(worker.group)!;
  const { first, response } = await answerTimes(() =>
    fetch(`${worker.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "bench-key",
        "anthropic-version": "2023-06-01",
        "x-relay": relay,
      },
      body,
    }),
  );
  if (!response.ok) throw new Error(`status ${response.status}`);
  await settle();
  return { first, cpu: workerdCpuMs(worker.group)! - cpu };
}

try {
  console.log(`load average at the start: ${load()}; ${rounds} rounds after 5 warm-up rounds`);
  const got = Object.fromEntries(RELAYS.map((r) => [r, { first: [] as number[], cpu: [] as number[] }]));
  for (let round = -5; round < rounds; round++)
    for (const relay of [...RELAYS].sort(() => Math.random() - 0.5)) {
      const { first, cpu } = await timed(relay);
      if (round < 0) continue;
      got[relay]!.first.push(first);
      got[relay]!.cpu.push(cpu);
    }
  console.log("\n| relay | first event p50 ms | workerd CPU p50 ms, whole answer |\n|---|---:|---:|");
  for (const relay of RELAYS)
    console.log(`| ${relay} | ${median(got[relay]!.first).toFixed(2)} | ${median(got[relay]!.cpu).toFixed(2)} |`);
  console.log(`\nload average at the end: ${load()}`);
} finally {
  worker.stop();
  await emulator.close();
}
