/** The port contracts against the Deno adapters (run by `deno test`, from test/unit/deno.test.ts). */
import { DenoKvStore } from "../../deno/deno-kv.store";
import { MemoryEmbedCounter } from "../../deno/embeds.memory";
import { cacheStoreContract, type Check, embedCounterContract } from "../contracts/ports.contract";

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
const counter = new MemoryEmbedCounter(Date.now);
for (const c of embedCounterContract) {
  Deno.test(`EmbedCounter contract: in-process ledger: ${c.name}`, () => c.run(counter, check, unique()));
}
