/** The port contracts against the Deno adapters (run by `deno test`, from test/unit/deno.test.ts). */
import { DenoKvStore } from "../../deno/deno-kv.store";
import { DenoKvEmbedCounter } from "../../deno/embeds.kv";
import { MemoryEmbedCounter } from "../../deno/embeds.memory";
import type { EmbedCounter } from "../../shared/ports";
import { DenoKvLedgerStore } from "../../deno/ledger.kv";
import { cacheStoreContract, type Check, embedCounterContract, ledgerStoreContract } from "../contracts/ports.contract";

const check: Check = {
  equal(actual, expected, what) {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    if (a !== e) throw new Error(`${what}: expected ${e.slice(0, 200)}, got ${a.slice(0, 200)}`);
  },
};

const kv = await Deno.openKv(":memory:");
const unique = () => crypto.randomUUID();

for (const c of cacheStoreContract) {
  Deno.test(`CacheStore contract: Deno KV: ${c.name}`, () => c.run(new DenoKvStore(kv), check, unique()));
}
for (const c of ledgerStoreContract) {
  Deno.test(`LedgerStore contract: Deno KV sums: ${c.name}`, () => c.run(new DenoKvLedgerStore(kv), check, unique()));
}
const counter = new MemoryEmbedCounter(Date.now);
for (const c of embedCounterContract) {
  Deno.test(`EmbedCounter contract: in-process ledger: ${c.name}`, () => c.run(counter, check, unique()));
}
const onKv = new DenoKvEmbedCounter(kv, Date.now);
for (const c of embedCounterContract) {
  Deno.test(`EmbedCounter contract: Deno KV counters: ${c.name}`, () => c.run(onKv, check, unique()));
}

// Two handles on one KV file behave as two processes: nothing but Deno KV's check-and-set keeps
// their reservations apart. Each call goes to the next handle in turn.
const file = await Deno.makeTempFile({ suffix: ".sqlite3" });
const handles = [new DenoKvEmbedCounter(await Deno.openKv(file), Date.now), new DenoKvEmbedCounter(await Deno.openKv(file), Date.now)];
let turn = 0;
const alternating: EmbedCounter = {
  reserve: (sessionId, imageKey, cap) => handles[turn++ % 2]!.reserve(sessionId, imageKey, cap),
  release: (sessionId, imageKey) => handles[turn++ % 2]!.release(sessionId, imageKey),
};
for (const c of embedCounterContract) {
  Deno.test({ name: `EmbedCounter contract: Deno KV counters, two handles on one file: ${c.name}`, sanitizeResources: false, fn: () => c.run(alternating, check, unique()) });
}
