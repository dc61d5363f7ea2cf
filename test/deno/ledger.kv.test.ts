/**
 * The Deno KV ledger store against Deno KV's commit limits: a flush whose keys add up past a
 * commit's 80 KiB (60 proxied calls under 200-character model names, as callers may send) is
 * written in several commits, losing nothing, the other tools' counts included. And its bound on a
 * bucket's model names, which processes sharing the KV and a restarted one keep.
 */
import { DenoKvLedgerStore } from "../../deno/ledger.kv";
import { loadConfig } from "../../shared/config/config.load";
import type { LedgerRow } from "../../shared/ports";
import { LEDGER_NAMES_PER_HOUR, LEDGER_OTHER_NAME, LedgerBuffer } from "../../shared/stats/ledger";

Deno.test("a batch of rows whose keys pass a commit's 80 KiB is written whole, in several commits", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = new DenoKvLedgerStore(kv);
  const warnings: string[] = [];
  const log = { info() {}, error() {}, warn: (event: string) => void warnings.push(event) };
  const ledger = new LedgerBuffer(store, log);
  const now = Date.now();
  ledger.record({ tool: "web_search", provider: "tavily", at: now, counts: { requests: 1, provider_calls: 1 } });
  const counts = {
    requests: 1,
    input_tokens: 10,
    cache_read_tokens: 3,
    output_tokens: 5,
    errors: 1,
    bytes_saved: 7,
    images_fitted: 1,
    images_retired: 1,
  };
  for (let i = 0; i < 60; i++)
    ledger.record({ tool: "llm", provider: "anthropic", model: `model-${i}-`.padEnd(200, "é"), at: now, counts });
  const pending = ledger.pendingRows;
  await ledger.flush();
  const answer = await store.report({ window: "1h", now, pricing: loadConfig({}).config.pricing });
  kv.close();
  if (warnings.length > 0) throw new Error(`the flush failed: ${warnings.join(", ")}`);
  const models = Object.values(answer.by_model.llm);
  // Each model's counters, and the search's two (requests, provider_calls).
  const read = models.reduce((n, counts) => n + Object.keys(counts).filter((name) => !name.endsWith("_usd")).length, 2);
  if (read !== pending) throw new Error(`${pending} rows flushed, ${read} read back`);
  if (models.length !== 60 || models.some((counts) => counts.images_retired !== 1))
    throw new Error(`60 models' counts flushed, ${models.length} read back`);
  if (answer.totals.web_search.requests !== 1) throw new Error("the web_search count was lost");
});

const pricing = loadConfig({}).config.pricing;
const HOUR = 3_600_000;

/** The names an answer breaks `llm` down by, less "(other)", and what "(other)" holds. */
async function namesOf(store: DenoKvLedgerStore, now: number) {
  const { by_model } = await store.report({ window: "1h", now, pricing });
  const names = Object.keys(by_model.llm).filter((name) => name !== LEDGER_OTHER_NAME);
  return { names: names.length, other: by_model.llm[LEDGER_OTHER_NAME]?.requests ?? 0 };
}

const named = (hour: number, model: string): LedgerRow => ({
  hour,
  tool: "llm",
  provider: "anthropic",
  model,
  counter: "requests",
  value: 1,
});

Deno.test("a bucket keeps its names bound across processes sharing the KV, and after a restart", async () => {
  const kv = await Deno.openKv(":memory:");
  const now = Date.now();
  const hour = Math.floor(now / HOUR) * HOUR;
  const [first, second] = [new DenoKvLedgerStore(kv), new DenoKvLedgerStore(kv)];
  // Two processes, one after the other, each with 60 names of its own.
  await first.add(Array.from({ length: 60 }, (_, i) => named(hour, `first-${i}`)));
  await second.add(Array.from({ length: 60 }, (_, i) => named(hour, `second-${i}`)));
  // The first again, with a name it has not seen: the other's 40 have filled the bucket since.
  await first.add([named(hour, "first-late")]);
  // A restarted process: it knows nothing but what the KV holds.
  await new DenoKvLedgerStore(kv).add([named(hour, "after-restart"), named(hour, "first-0")]);
  const seen = await namesOf(first, now);
  kv.close();
  if (seen.names !== LEDGER_NAMES_PER_HOUR) throw new Error(`${seen.names} names kept apart in one bucket`);
  if (seen.other !== 22) throw new Error(`${seen.other} requests under ${LEDGER_OTHER_NAME}, not 22`);
});

Deno.test("concurrent batches over many buckets are all written", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = new DenoKvLedgerStore(kv);
  const now = Date.now();
  const hour = Math.floor(now / HOUR) * HOUR;
  // Each batch touches 60 hourly buckets (more than a store keeps the names of at once).
  const batch = (tag: string) => Array.from({ length: 60 }, (_, i) => named(hour - i * HOUR, tag));
  await Promise.all([store.add(batch("a")), store.add(batch("b")), store.add(batch("c"))]);
  const { by_model } = await store.report({ window: "7d", now, pricing });
  kv.close();
  for (const tag of ["a", "b", "c"])
    if (by_model.llm[tag]?.requests !== 60) throw new Error(`${tag}: ${by_model.llm[tag]?.requests} of 60 requests`);
});
