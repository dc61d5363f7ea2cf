/**
 * The safety gate on the hot path: µs per URL for the whole gate (secret scan, parse, SSRF,
 * blocklist) on a literal public IP and on a hostname whose DNS answer is cached (warm).
 * The DoH endpoint is an in-process fetch: only the first lookup reaches it, nothing leaves the
 * process. Run: npx tsx bench/gate.bench.ts (or npm run bench -- gate).
 */
import type { FetchFn } from "../shared/ports";
import { createDnsResolver } from "../shared/safety/dns";
import { type GateOptions, gateUrl } from "../shared/safety/gate";
import { findSecretInUrl } from "../shared/safety/secrets";
import { median, percentile } from "./stats";

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
  return Promise.resolve(new Response(JSON.stringify({ Status: 0, Answer }), { headers: { "content-type": "application/dns-json" } }));
};

const gate: GateOptions = {
  allowPrivate: false,
  resolver: createDnsResolver({ url: "https://doh.invalid/dns-query", fetch: inProcessDoh, clock: Date.now }),
  blocklist: ["ads.example", "*.tracker.example", "blocked.example.net", "evil.test"],
};

const CASES: Array<[name: string, run: () => Promise<unknown>]> = [
  ["literal public IPv4", () => gateUrl("https://93.184.215.14/article/2024/05/edge-caching?id=42&ref=home", gate)],
  ["hostname, cached DNS answer", () => gateUrl("https://news.example.org/article/2024/05/edge-caching?id=42&ref=home", gate)],
  [
    "hostname, cached, long URL (~800 chars, 12 params, %-encoded)",
    () =>
      gateUrl(
        `https://news.example.org/search/results/page/3?${Array.from({ length: 12 }, (_, i) => `param${i}=${encodeURIComponent(`value ${i} with spaces/and slashes & more`)}`).join("&")}`,
        gate,
      ),
  ],
  ["secret scan only (same short URL)", async () => findSecretInUrl("https://news.example.org/article/2024/05/edge-caching?id=42&ref=home")],
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
  console.log(`Node ${process.version}, ${BATCHES} batches of ${BATCH} calls; µs per URL (median and p95 of the batch means).\n`);
  console.log("| case | median µs/URL | p95 µs/URL |");
  console.log("|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(`\nDoH requests during the whole run: ${dohCalls} (A + AAAA for the one cold lookup).`);
}

await main();
