/**
 * The safety gate on the hot path: µs per URL for the whole gate (secret scan, parse, SSRF,
 * blocklist) on a literal public IP and on a hostname whose DNS answer is cached (warm).
 * The DoH endpoint is an in-process fetch: only the first lookup reaches it, nothing leaves the
 * process. A second table prices the secret scan on 8 KB URLs: a plain one against crafted ones
 * that drive a backtracking scan quadratic (test/fixtures/crafted-urls.ts), as a ratio; the scan
 * is linear, so each ratio should stay under 2x (the bench exits 1 past it). Run: npx tsx
 * bench/gate.bench.ts (or npm run bench -- gate).
 */
import type { FetchFn } from "../shared/ports";
import { createDnsResolver } from "../shared/safety/dns";
import { type GateOptions, gateUrl } from "../shared/safety/gate";
import { findSecretInUrl } from "../shared/safety/secrets";
import { median, percentile } from "./stats";
import { CRAFTED_8K_URLS, PLAIN_8K_URL } from "../test/fixtures/crafted-urls";

const BATCH = 1000;
const BATCHES = 300;

let dohCalls = 0;
const inProcessDoh: FetchFn = (input) => {
  dohCalls++;
  const type = new URL(input.toString()).searchParams.get("type");
  const Answer =
    type === "A"
      ? [{ name: "news.example.org", type: 1, TTL: 300, data: "93.184.215.14" }]
      : [{ name: "news.example.org", type: 28, TTL: 300, data: "2606:2800:21f:cb07:6820:80da:af6b:8b2c" }];
  return Promise.resolve(
    new Response(JSON.stringify({ Status: 0, Answer }), { headers: { "content-type": "application/dns-json" } }),
  );
};

const gate: GateOptions = {
  allowPrivate: false,
  resolver: createDnsResolver({ url: "https://doh.invalid/dns-query", fetch: inProcessDoh, clock: Date.now }),
  blocklist: ["ads.example", "*.tracker.example", "blocked.example.net", "evil.test"],
};

const CASES: Array<[name: string, run: () => Promise<unknown>]> = [
  ["literal public IPv4", () => gateUrl("https://93.184.215.14/article/2024/05/edge-caching?id=42&ref=home", gate)],
  [
    "hostname, cached DNS answer",
    () => gateUrl("https://news.example.org/article/2024/05/edge-caching?id=42&ref=home", gate),
  ],
  [
    "hostname, cached, long URL (~800 chars, 12 params, %-encoded)",
    () =>
      gateUrl(
        `https://news.example.org/search/results/page/3?${Array.from({ length: 12 }, (_, i) => `param${i}=${encodeURIComponent(`value ${i} with spaces/and slashes & more`)}`).join("&")}`,
        gate,
      ),
  ],
  [
    "secret scan only (same short URL)",
    async () => findSecretInUrl("https://news.example.org/article/2024/05/edge-caching?id=42&ref=home"),
  ],
];

async function measure(run: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 2000; i++) await run(); // warm up JIT and the DNS cache
  const perUrlMicros: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const start = performance.now();
    for (let i = 0; i < BATCH; i++) await run();
    perUrlMicros.push(((performance.now() - start) * 1000) / BATCH);
  }
  return perUrlMicros;
}

async function main(): Promise<void> {
  const rows: string[] = [];
  for (const [name, run] of CASES) {
    const samples = await measure(run);
    rows.push(`| ${name} | ${median(samples).toFixed(2)} | ${percentile(samples, 95).toFixed(2)} |`);
  }
  console.log(
    `Node ${process.version}, ${BATCHES} batches of ${BATCH} calls; µs per URL (median and p95 of the batch means).\n`,
  );
  console.log("| case | median µs/URL | p95 µs/URL |");
  console.log("|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(`\nDoH requests during the whole run: ${dohCalls} (A + AAAA for the one cold lookup).`);
  console.log(
    `\nSecret scan on ${PLAIN_8K_URL.length}-character URLs (µs per URL, median of ${LONG_BATCHES} batches of ${LONG_BATCH}; plain and crafted interleaved):\n`,
  );
  console.log("| URL | median µs/URL | p95 µs/URL | ratio to plain (median) |");
  console.log("|---|---|---|---|");
  const cases: Array<[string, string]> = [
    ["plain 8 KB URL (long path, 80+ ordinary parameters, %-encoded text)", PLAIN_8K_URL],
    ...CRAFTED_8K_URLS.map(([name, url]): [string, string] => [`crafted: ${name}`, url]),
  ];
  const samples = cases.map(() => [] as number[]);
  for (const [, url] of cases) for (let i = 0; i < 200; i++) findSecretInUrl(url); // warm up
  for (let b = 0; b < LONG_BATCHES; b++) {
    for (const [c, [, url]] of cases.entries()) {
      const start = performance.now();
      for (let i = 0; i < LONG_BATCH; i++) findSecretInUrl(url);
      samples[c]!.push(((performance.now() - start) * 1000) / LONG_BATCH);
    }
  }
  const plain = median(samples[0]!);
  let worst = 0;
  for (const [c, [name]] of cases.entries()) {
    const ratio = median(samples[c]!) / plain;
    if (c > 0) worst = Math.max(worst, ratio);
    console.log(
      `| ${name} | ${median(samples[c]!).toFixed(1)} | ${percentile(samples[c]!, 95).toFixed(1)} | ${ratio.toFixed(2)}x |`,
    );
  }
  console.log(`\nWorst crafted / plain: ${worst.toFixed(2)}x (target: at most 2x).`);
  // The test suite does not time the scan (a ratio of two timings on a loaded machine is noise):
  // this is the check that it stays linear.
  if (worst > 2) process.exitCode = 1;
}

const LONG_BATCH = 20;
const LONG_BATCHES = 60;

await main();
