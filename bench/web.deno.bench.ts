/**
 * web_search on Deno next to wrangler dev, in one run:
 * 1. provider calls per unique request for N identical concurrent requests (N = 1, 4, 16, 64),
 *    under wrangler dev (Durable Objects) and spread over 4 Deno processes sharing one Deno KV file
 *    (deno/flight.kv.ts), plus the leader's and the joiners' latency on Deno;
 * 2. cache-hit latency of POST /v1/web_search on Deno vs a bare Deno.serve route returning the
 *    same JSON.
 * Run: npm run bench -- web (or npx tsx bench/web.deno.bench.ts; `npx tsx bench/web.deno.bench.ts hit`
 * runs only the second part). With WEB_BENCH_BEFORE=<dir of another checkout>, that checkout's
 * deno/main.ts (on the same Deno KV file) is measured in the same rounds of the second part. The
 * second part also measures the runtime's floor for a hit: the bare route reading and parsing the
 * request body and sending the hit's headers (bench/bare-deno, FLOOR=1). Beside each side's p50,
 * the CPU its Deno process used per request over the measured rounds (every thread, Linux only).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emulatorVars, startLocalStack } from "../scripts/local-stack";
import { DENO_RUN, type DenoService, startDeno } from "../test/support/deno-service";
import { median, ms, percentile } from "./stats";
import { processGroupCpuMs } from "./workerd-processes";

const PROCESSES = 4;
const UNIQUE_PER_N = 5;
const HIT_ROUNDS = 1000;
/** Enough for V8 to optimise the hit path (the first few hundred requests run slower). */
const WARM_UP_PAIRS = 300;
const PROVIDER_DELAY_MS = 250;
const HIT_ONLY = process.argv.includes("hit");

async function timed(fn: () => Promise<Response>): Promise<{ ms: number; cache: string }> {
  const start = performance.now();
  const response = await fn();
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  return { ms: performance.now() - start, cache: response.headers.get("x-cache") ?? "" };
}

const search = (base: string, query: string) => () =>
  fetch(`${base}/v1/web_search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });

async function main() {
  const stack = await startLocalStack();
  const run = Date.now().toString(36);
  const kvPath = join(mkdtempSync(join(tmpdir(), "bench-deno-kv-")), "cache.sqlite3");
  const env = {
    ...emulatorVars(stack.emulatorUrl),
    DENO_KV_PATH: kvPath,
    SECURITY_ALLOW_ANONYMOUS: "true",
    WEB_CACHE_TTL_MINUTES: "60",
  };
  const deno: DenoService[] = await Promise.all(Array.from({ length: PROCESSES }, () => startDeno({ env })));
  const beforeDir = process.env.WEB_BENCH_BEFORE;
  const before = beforeDir
    ? await startDeno({
        env,
        command: ["node_modules/.bin/deno", ...DENO_RUN, `${beforeDir}/deno/main.ts`],
      })
    : null;
  const lines: string[] = [];
  try {
    // 1. Fan-in: N identical requests at once, UNIQUE_PER_N different queries per N, one after another.
    lines.push(
      `### Provider calls per unique request: N identical concurrent requests (provider answers in ${PROVIDER_DELAY_MS} ms)`,
      "",
    );
    lines.push(
      `${UNIQUE_PER_N} different queries per N; on Deno each query's N requests are spread round-robin over ${PROCESSES} processes sharing one Deno KV file.`,
      "",
    );
    lines.push(
      "| N | wrangler dev: calls / unique | Deno ×4: calls / unique | Deno leader p50 ms | Deno joiners p50 ms | Deno joiners p99 ms |",
      "|---|---|---|---|---|---|",
    );
    for (const n of HIT_ONLY ? [] : [1, 4, 16, 64]) {
      const leaders: number[] = [];
      const joiners: number[] = [];
      for (let u = 0; u < UNIQUE_PER_N; u++) {
        const query = (runtime: string) => `bench deno fan [slow:${PROVIDER_DELAY_MS}] ${run}${runtime}n${n}u${u}`;
        await Promise.all(Array.from({ length: n }, () => timed(search(stack.url, query("w")))));
        const results = await Promise.all(
          Array.from({ length: n }, (_, i) => timed(search(deno[i % PROCESSES]!.url, query("d")))),
        );
        for (const r of results) (r.cache === "MISS" ? leaders : joiners).push(r.ms);
      }
      const perUnique = async (runtime: string) =>
        ((await stack.providerCalls("tavily", `${run}${runtime}n${n}u`)) / UNIQUE_PER_N).toFixed(2);
      lines.push(
        `| ${n} | ${await perUnique("w")} | ${await perUnique("d")} | ${ms(median(leaders))} | ${ms(median(joiners))} | ${ms(percentile(joiners, 99))} |`,
      );
    }

    // 2. Cache hit on Deno vs a bare Deno.serve route with the same JSON (one process's hits come
    // from its memory copy of the entry: deno/cache.kv.ts).
    const hitQuery = `bench deno hit ${run}`;
    const payload = await (await search(deno[0]!.url, hitQuery)()).text();
    const bareDeno = (floor: boolean) =>
      startDeno({
        env: { PAYLOAD: payload.replace('"cache":"miss"', '"cache":"hit"'), FLOOR: floor ? "1" : "0" },
        command: ["node_modules/.bin/deno", "run", "--allow-net", "--allow-env", "bench/bare-deno/main.ts"],
        healthPath: "/",
      });
    const bare = await bareDeno(false);
    const floor = await bareDeno(true).catch(async (error: unknown) => {
      await bare.stop();
      throw error;
    });
    try {
      const hit: number[] = [];
      const base: number[] = [];
      const beforeHit: number[] = [];
      const floorHit: number[] = [];
      const pairRatios: number[] = [];
      const bareRequest = () => fetch(bare.url, { method: "POST", body: "{}" });
      const floorRequest = search(floor.url, hitQuery);
      const beforeRequest = before ? search(before.url, hitQuery) : null;
      for (let i = 0; i < WARM_UP_PAIRS; i++) {
        await timed(search(deno[0]!.url, hitQuery));
        if (beforeRequest) await timed(beforeRequest);
        await timed(bareRequest);
        await timed(floorRequest);
      }
      // The sides take turns going first: the side measured first in a round ran measurably faster
      // (0.05-0.1x of the ratio at load 8-12), whichever it was.
      const sides = [
        async () => {
          const a = await timed(search(deno[0]!.url, hitQuery));
          if (a.cache !== "HIT") throw new Error(`expected a cache hit, got ${a.cache}`);
          hit.push(a.ms);
        },
        async () => void base.push((await timed(bareRequest)).ms),
        async () => void floorHit.push((await timed(floorRequest)).ms),
        ...(beforeRequest ? [async () => void beforeHit.push((await timed(beforeRequest)).ms)] : []),
      ];
      // Each side's process (every Deno runs in a process group of its own), in the rows' order.
      const groups = [deno[0]!, bare, floor, ...(before ? [before] : [])].map((d) => d.process.pid!);
      const cpuBefore = groups.map((group) => processGroupCpuMs(group));
      for (let i = 0; i < HIT_ROUNDS; i++) {
        for (let k = 0; k < sides.length; k++) await sides[(i + k) % sides.length]!();
        pairRatios.push(hit[i]! / base[i]!);
      }
      const cpu = groups.map((group, k) => {
        const [start, end] = [cpuBefore[k], processGroupCpuMs(group)];
        return start === undefined || end === undefined ? "-" : ms((end - start) / HIT_ROUNDS);
      });
      const [hitCpu, bareCpu, floorCpu, beforeCpu] = cpu;
      lines.push(
        "",
        "### Cache hit on Deno (Deno KV file, 4 processes running) vs a bare Deno.serve route returning the same JSON",
        "",
      );
      lines.push(
        `${HIT_ROUNDS} sequential requests each, interleaved (the sides take turns going first), after ${WARM_UP_PAIRS} warm-up pairs; the last row is the median of each pair's ratio (a pair runs under the same machine load).`,
        "",
      );
      lines.push("| route | p50 ms | p99 ms | CPU ms / request |", "|---|---|---|---|");
      lines.push(`| POST /v1/web_search (hit), Deno | ${ms(median(hit))} | ${ms(percentile(hit, 99))} | ${hitCpu} |`);
      if (before)
        lines.push(
          `| the same hit, ${beforeDir} | ${ms(median(beforeHit))} | ${ms(percentile(beforeHit, 99))} | ${beforeCpu} |`,
        );
      lines.push(`| bare Deno.serve, same JSON | ${ms(median(base))} | ${ms(percentile(base, 99))} | ${bareCpu} |`);
      lines.push(
        `| bare Deno.serve reading the body, with the hit's headers (the floor) | ${ms(median(floorHit))} | ${ms(percentile(floorHit, 99))} | ${floorCpu} |`,
      );
      lines.push(
        `| ratio hit / bare | ${(median(hit) / median(base)).toFixed(2)}x | ${(percentile(hit, 99) / percentile(base, 99)).toFixed(2)}x | |`,
      );
      if (before)
        lines.push(
          `| ratio ${beforeDir} / bare | ${(median(beforeHit) / median(base)).toFixed(2)}x | ${(percentile(beforeHit, 99) / percentile(base, 99)).toFixed(2)}x | |`,
        );
      lines.push(
        `| ratio floor / bare | ${(median(floorHit) / median(base)).toFixed(2)}x | ${(percentile(floorHit, 99) / percentile(base, 99)).toFixed(2)}x | |`,
      );
      lines.push(`| median of paired ratios | ${median(pairRatios).toFixed(2)}x | | |`);
    } finally {
      await Promise.all([bare.stop(), floor.stop()]);
    }
  } finally {
    await Promise.all([...deno, ...(before ? [before] : [])].map((d) => d.stop()));
    await stack.stop();
  }
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
