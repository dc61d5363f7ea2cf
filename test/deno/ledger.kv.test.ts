/**
 * The Deno KV ledger store against Deno KV's commit limits: a flush whose keys add up past a
 * commit's 80 KiB (60 proxied calls under 200-character model names, as callers may send) is
 * written in several commits, losing nothing, the other tools' counts included.
 */
import { DenoKvLedgerStore } from "../../deno/ledger.kv";
import { loadConfig } from "../../shared/config/config.load";
import { LedgerBuffer } from "../../shared/stats/ledger";

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
