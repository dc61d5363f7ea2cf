/**
 * web_search under `wrangler dev`, measured side by side in one run:
 * 1. cache-hit latency of POST /v1/web_search vs a bare Worker returning the same JSON (and a
 *    second bare Worker: the noise between identical sides), and beside each the CPU all of its
 *    `wrangler dev` processes used per request (wrangler's Node process, which relays and files
 *    every log line the Worker writes, and its workerd processes);
 * 2. N identical concurrent requests (N = 1, 4, 16, 64): provider calls, and latency of the
 *    leader (the one that paid) vs the joiners;
 * 3. web_extract through the Worker: a miss (the provider pays) vs a hit of the same URL;
 * 4. cache-hit latency with the savings ledger on and off (a second wrangler dev with
 *    LEDGER_MODE=off), interleaved, so the ledger's cost is measured on the same loaded box.
 * Run: npm run bench -- web (or npx tsx bench/web.bench.ts; `npx tsx bench/web.bench.ts hit` runs
 * only the first part). With WEB_BENCH_BEFORE=<dir of another checkout>[,<dir>...] (node_modules
 * installed or linked), each checkout's hit is measured in the same rounds of the first part: the
 * code before a change, or copies with one stage removed each (docs/benchmarks.md, "Where a hit's
 * time goes").
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { emulatorVars, startLocalStack } from "../scripts/local-stack";
import { startBare } from "./bare-worker/start";
import { median, ms, percentile, timed } from "./stats";
import { type DirectWorker, startDirect } from "./workerd-direct";
import { processGroupCpuMs, workerdCpuMs } from "./workerd-processes";

const HIT_ROUNDS = 400;
const PROVIDER_DELAY_MS = 250;
const EXTRACT_URLS = 100;
const EXTRACT_DELAY_MS = 150;
const HIT_ONLY = process.argv.includes("hit");

async function main() {
  const stack = await startLocalStack();
  const others: Array<{ dir: string; stack: Awaited<ReturnType<typeof startLocalStack>> }> = [];
  for (const dir of (process.env.WEB_BENCH_BEFORE ?? "").split(",").filter(Boolean))
    others.push({ dir, stack: await startLocalStack({ cwd: dir }) });
  const run = Date.now().toString(36);
  const searchAt = (base: string, query: string) => () =>
    fetch(`${base}/v1/web_search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
  const search = (query: string) => searchAt(stack.url, query);
  const lines: string[] = [];
  try {
    // 1. Cache hit vs bare route (and the other checkout's hit), interleaved, under wrangler dev and
    // on workerd without it.
    const hitQuery = `bench hit ${run}`;
    const warm = await search(hitQuery)();
    const payload = await warm.text();
    for (const other of others) await (await searchAt(other.stack.url, hitQuery)()).arrayBuffer();
    const hitJson = payload.replace('"cache":"miss"', '"cache":"hit"');
    const bare = await startBare(hitJson);
    // The same bare Worker again: how far apart two identical sides come out on this box, in this run.
    const bareAgain = await startBare(hitJson);
    // The same bundles a deploy would upload, on workerd through Miniflare, no wrangler dev: the
    // service's log lines written by workerd to its own stdout (a file), and once more through
    // Miniflare's Node process (its default), to see what a line costs there.
    const vars = emulatorVars(stack.emulatorUrl);
    const direct = await Promise.all([
      startDirect({ vars, logs: "workerd" }),
      ...others.map(({ dir }) => startDirect({ cwd: dir, vars, logs: "workerd" })),
      startDirect({ vars, logs: "node" }),
      startDirect({ config: "bench/bare-worker/wrangler.toml", vars: { PAYLOAD: hitJson }, logs: "workerd" }),
      startDirect({ config: "bench/bare-worker/wrangler.toml", vars: { PAYLOAD: hitJson }, logs: "workerd" }),
    ]);
    const [directHit, ...directRest] = direct;
    const directOthers = directRest.slice(0, others.length);
    const [directNodeLogs, directBareAgain, directBare] = directRest.slice(others.length) as [
      DirectWorker,
      DirectWorker,
      DirectWorker,
    ];
    for (const side of [directHit!, ...directOthers, directNodeLogs])
      await (await searchAt(side.url, hitQuery)()).arrayBuffer();
    try {
      interface Side {
        name: string;
        request: () => Promise<Response>;
        times: number[];
        group: number;
        hit: boolean;
      }
      const post = (url: string) => () => fetch(url, { method: "POST", body: "{}" });
      const side = (name: string, request: () => Promise<Response>, group: number, hit: boolean): Side => ({
        name,
        request,
        times: [],
        group,
        hit,
      });
      // Two setups, each with its hit sides, a second bare Worker (the noise between identical
      // sides) and the bare Worker every ratio of the setup is to.
      const setups = [
        {
          label: "wrangler dev",
          hits: [
            side("POST /v1/web_search (hit)", search(hitQuery), stack.processGroup, true),
            ...others.map(({ dir, stack: other }) =>
              side(`the same hit, ${dir}`, searchAt(other.url, hitQuery), other.processGroup, true),
            ),
          ],
          bareAgain: side("bare Worker again", post(bareAgain.url), bareAgain.group, false),
          bare: side("bare Worker, same JSON", post(bare.url), bare.group, false),
        },
        {
          label: "workerd, no wrangler",
          hits: [
            side(
              "POST /v1/web_search (hit), log lines to workerd's stdout",
              searchAt(directHit!.url, hitQuery),
              directHit!.group,
              true,
            ),
            ...directOthers.map((d, k) =>
              side(`the same hit, ${others[k]!.dir}`, searchAt(d.url, hitQuery), d.group, true),
            ),
            side(
              "the same hit, log lines through Miniflare's Node process",
              searchAt(directNodeLogs.url, hitQuery),
              directNodeLogs.group,
              true,
            ),
          ],
          bareAgain: side("bare Worker again", post(directBareAgain.url), directBareAgain.group, false),
          bare: side("bare Worker, same JSON", post(directBare.url), directBare.group, false),
        },
      ];
      const sides = setups.flatMap(({ hits, bareAgain, bare }) => [...hits, bareAgain, bare]);
      // The hit / bare ratio of each round, per setup.
      const paired = setups.map(() => [] as number[]);
      for (let i = 0; i < 30; i++) for (const { request } of sides) await timed(request);
      const cpu = () => sides.map(({ group }) => [processGroupCpuMs(group), workerdCpuMs(group)] as const);
      const loadStart = loadavg();
      const cpuBefore = cpu();
      for (let i = 0; i < HIT_ROUNDS; i++) {
        // Every other round in reverse: work a side leaves after its response (its log line, in
        // wrangler's processes) falls on a different neighbour's request each round.
        for (const { request, times, hit } of i % 2 === 0 ? sides : [...sides].reverse()) {
          const a = await timed(request);
          if (hit && a.cache !== "HIT") throw new Error(`expected a cache hit, got ${a.cache}`);
          times.push(a.ms);
        }
        for (const [k, { hits, bare }] of setups.entries()) paired[k]!.push(hits[0]!.times[i]! / bare.times[i]!);
      }
      const cpuAfter = cpu();
      const loadEnd = loadavg();
      const perRequest = (k: number, part: 0 | 1) => {
        const [start, end] = [cpuBefore[k]![part], cpuAfter[k]![part]];
        return start === undefined || end === undefined ? Number.NaN : (end - start) / HIT_ROUNDS;
      };
      const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
      lines.push(
        "### Cache hit vs a bare Worker returning the same JSON",
        "",
        `${HIT_ROUNDS} sequential requests each, interleaved (every other round in reverse), after 30 warm-up rounds; each ratio is to the bare Worker of the same setup. CPU per request: every process of the side (wrangler dev: its Node process and its two workerd; without wrangler: the Node process that started Miniflare, and workerd), and of it workerd's. Load average ${loads(loadStart)} at the start, ${loads(loadEnd)} at the end.`,
        "",
      );
      lines.push(
        "| route | p50 ms | p99 ms | ratio p50 | CPU ms | of it workerd | of it Node |",
        "|---|---|---|---|---|---|---|",
      );
      for (const { label, hits, bareAgain, bare } of setups) {
        for (const one of [...hits, bareAgain, bare]) {
          const k = sides.indexOf(one);
          const [all, workerd] = [perRequest(k, 0), perRequest(k, 1)];
          lines.push(
            `| ${label}: ${one.name} | ${ms(median(one.times))} | ${ms(percentile(one.times, 99))} | ${(median(one.times) / median(bare.times)).toFixed(2)}x | ${ms(all)} | ${ms(workerd)} | ${ms(all - workerd)} |`,
          );
        }
      }
      for (const [k, { label }] of setups.entries())
        lines.push(`| ${label}: median of paired ratios, hit / bare | | | ${median(paired[k]!).toFixed(2)}x | | | |`);
      lines.push("");
      const lineCount = readFileSync(directHit!.logFile, "utf8").split("\n").filter(Boolean).length;
      lines.push(`Log lines workerd wrote to its stdout file for the hit side without wrangler: ${lineCount}.`, "");
    } finally {
      bare.stop();
      bareAgain.stop();
      for (const d of direct) d.stop();
      for (const other of others) await other.stack.stop();
    }
    if (HIT_ONLY) {
      console.log(lines.join("\n"));
      return;
    }

    // 2. Identical concurrent requests.
    lines.push(`### N identical concurrent requests (provider answers in ${PROVIDER_DELAY_MS} ms)`, "");
    lines.push(
      "| N | provider calls | leader ms | joiners p50 ms | joiners p99 ms | statuses |",
      "|---|---|---|---|---|---|",
    );
    for (const n of [1, 4, 16, 64]) {
      const token = `${run}n${n}`;
      const query = `bench flight [slow:${PROVIDER_DELAY_MS}] ${token}`;
      const results = await Promise.all(Array.from({ length: n }, () => timed(search(query))));
      const leader = results.filter((r) => r.cache === "MISS");
      const joiners = results.filter((r) => r.cache !== "MISS").map((r) => r.ms);
      const counts = new Map<string, number>();
      for (const r of results) counts.set(r.cache, (counts.get(r.cache) ?? 0) + 1);
      const statuses = [...counts].map(([k, v]) => `${k}×${v}`).join(" ");
      lines.push(
        `| ${n} | ${await stack.providerCalls("tavily", token)} | ${ms(leader[0]?.ms ?? Number.NaN)} | ${ms(median(joiners))} | ${ms(percentile(joiners, 99))} | ${statuses} |`,
      );
    }

    // 3. Extract: miss vs hit of the same URLs (emulated provider answers in EXTRACT_DELAY_MS).
    const extract = (url: string) => () =>
      fetch(`${stack.url}/v1/web_extract`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ urls: [url] }),
      });
    const misses: number[] = [];
    const hits: number[] = [];
    for (let i = 0; i < EXTRACT_URLS; i++) {
      const url = `https://docs.example.com/[slow:${EXTRACT_DELAY_MS}]/bench/${run}/${i}`;
      const miss = await timed(extract(url));
      const hit = await timed(extract(url));
      if (miss.cache !== "HIT=0,MISS=1" || hit.cache !== "HIT=1,MISS=0")
        throw new Error(`unexpected X-Cache ${miss.cache} / ${hit.cache}`);
      misses.push(miss.ms);
      hits.push(hit.ms);
    }
    lines.push(
      "",
      `### web_extract: miss vs hit of the same URL (provider answers in ${EXTRACT_DELAY_MS} ms)`,
      "",
      `${EXTRACT_URLS} URLs, each extracted twice in a row.`,
      "",
    );
    lines.push("| request | p50 ms | p99 ms |", "|---|---|---|");
    lines.push(`| miss (provider paid) | ${ms(median(misses))} | ${ms(percentile(misses, 99))} |`);
    lines.push(`| hit (gate + cache) | ${ms(median(hits))} | ${ms(percentile(hits, 99))} |`);
    lines.push(
      `| provider calls | ${await stack.providerCalls("tavily", `/bench/${run}/`)} for ${EXTRACT_URLS * 2} requests | |`,
    );

    // 4. The ledger's cost on a cache hit: the same hit with the ledger on (this stack) and off.
    const off = await startLocalStack({ vars: { LEDGER_MODE: "off" } });
    try {
      const hitOn = search(hitQuery);
      const hitOff = () =>
        fetch(`${off.url}/v1/web_search`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: hitQuery }),
        });
      await hitOff();
      const on: number[] = [];
      const offTimes: number[] = [];
      for (let i = 0; i < 30; i++) {
        await timed(hitOn);
        await timed(hitOff);
      }
      for (let i = 0; i < HIT_ROUNDS; i++) {
        // Alternate which goes first, so neither side always follows the other.
        const first = await timed(i % 2 === 0 ? hitOn : hitOff);
        const second = await timed(i % 2 === 0 ? hitOff : hitOn);
        const [a, b] = i % 2 === 0 ? [first, second] : [second, first];
        if (a.cache !== "HIT" || b.cache !== "HIT") throw new Error("expected cache hits on both sides");
        on.push(a.ms);
        offTimes.push(b.ms);
      }
      const stats = (await (await fetch(`${stack.url}/v1/stats?window=1h`)).json()) as {
        totals: { web_search: { requests: number; hits: number } };
      };
      lines.push(
        "",
        "### Cache hit with the savings ledger on and off",
        "",
        `${HIT_ROUNDS} sequential hits each, interleaved, after 30 warm-up pairs; two wrangler dev processes, the second with LEDGER_MODE=off.`,
        "",
      );
      lines.push("| ledger | p50 ms | p99 ms |", "|---|---|---|");
      lines.push(`| on (counted, flushed in waitUntil) | ${ms(median(on))} | ${ms(percentile(on, 99))} |`);
      lines.push(`| off | ${ms(median(offTimes))} | ${ms(percentile(offTimes, 99))} |`);
      lines.push(
        `| on / off | ${(((median(on) - median(offTimes)) / median(offTimes)) * 100).toFixed(1)} % | ${(((percentile(on, 99) - percentile(offTimes, 99)) / percentile(offTimes, 99)) * 100).toFixed(1)} % |`,
      );
      lines.push(
        `| /v1/stats afterwards (this run's stack) | web_search requests ${stats.totals.web_search.requests}, hits ${stats.totals.web_search.hits} | |`,
      );
    } finally {
      await off.stop();
    }
  } finally {
    await stack.stop();
  }
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
