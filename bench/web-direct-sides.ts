/**
 * The web_search hit on workerd without wrangler dev (bench/workerd-direct.ts), beside other
 * checkouts or copies of this one (each with one stage removed, to measure that stage by its
 * absence) and bare Workers, interleaved (every other round in reverse): wall p50, its ratio to
 * the last bare Worker, and the workerd process's CPU per request (every thread). The first extra
 * bare Worker answers with FLOOR=1 (body read and parsed, the hit's headers: the runtime's floor).
 * Shorter than `bench/web.bench.ts hit` (no wrangler dev), for trying changes one after another.
 * Run: [DIRS=<checkout>,...] [ROUNDS=1500] npx tsx bench/web-direct-sides.ts
 */
import { loadavg } from "node:os";
import { emulatorVars, startEmulator } from "../test/emulator/server";
import { median, timed } from "./stats";
import { startDirect } from "./workerd-direct";
import { workerdCpuMs } from "./workerd-processes";

const ROUNDS = Number(process.env.ROUNDS ?? 1500);
const emulator = await startEmulator();
const vars = emulatorVars(emulator.url);
const dirs = [".", ...(process.env.DIRS ?? "").split(",").filter(Boolean)];
const body = JSON.stringify({ query: `direct sides ${Date.now().toString(36)}` });
const hits = await Promise.all(dirs.map((cwd) => startDirect({ cwd, vars, logs: "workerd" })));
const search = (url: string) => () =>
  fetch(`${url}/v1/web_search`, { method: "POST", headers: { "content-type": "application/json" }, body });
const payload = (await (await search(hits[0]!.url)()).text()).replace('"cache":"miss"', '"cache":"hit"');
for (const hit of hits.slice(1)) await (await search(hit.url)()).arrayBuffer();
const floors = ["0", "1", "0"];
const bares = await Promise.all(
  floors.map((FLOOR) =>
    startDirect({ config: "bench/bare-worker/wrangler.toml", vars: { PAYLOAD: payload, FLOOR }, logs: "workerd" }),
  ),
);
const sides = [
  ...hits.map((h, i) => ({ name: `hit, ${dirs[i]}`, request: search(h.url), group: h.group, times: [] as number[] })),
  ...bares.map((b, i) => ({
    name: floors[i] === "1" ? "bare Worker, FLOOR=1" : "bare Worker",
    request: () => fetch(b.url, { method: "POST", body: "{}" }),
    group: b.group,
    times: [] as number[],
  })),
];
try {
  for (let i = 0; i < 50; i++) for (const side of sides) await timed(side.request);
  const loadStart = loadavg()[0]!;
  const cpuStart = sides.map((side) => workerdCpuMs(side.group)!);
  for (let i = 0; i < ROUNDS; i++)
    for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
      const answer = await timed(side.request);
      if (side.name.startsWith("hit") && answer.cache !== "HIT") throw new Error(`expected a hit: ${answer.cache}`);
      side.times.push(answer.ms);
    }
  const cpuEnd = sides.map((side) => workerdCpuMs(side.group)!);
  const base = median(sides[sides.length - 1]!.times);
  console.log(`load average ${loadStart.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}; ${ROUNDS} rounds`);
  console.log("| side | p50 ms | ratio p50 | workerd CPU ms / request |\n|---|---|---|---|");
  for (const [k, side] of sides.entries())
    console.log(
      `| ${side.name} | ${median(side.times).toFixed(3)} | ${(median(side.times) / base).toFixed(2)}x | ${((cpuEnd[k]! - cpuStart[k]!) / ROUNDS).toFixed(3)} |`,
    );
} finally {
  for (const worker of [...hits, ...bares]) worker.stop();
  await emulator.close();
}
