/**
 * The repeat-cap counters on Deno against the session's idle time: a refused load is the session's
 * use too, so a session still asking for a capped image stays capped a day after its last granted
 * load, in the single-process counter and in the Deno KV one alike (Workers: SessionDO's alarm).
 */
import { DenoKvEmbedCounter } from "../../deno/embeds.kv";
import { MemoryEmbedCounter } from "../../deno/embeds.memory";

const HOUR = 3_600_000;

for (const [name, make] of [
  ["in process", async (clock: () => number) => new MemoryEmbedCounter(clock)],
  ["Deno KV", async (clock: () => number) => new DenoKvEmbedCounter(await Deno.openKv(":memory:"), clock)],
] as const) {
  Deno.test(`${name}: a session still asking for a capped image an hour ago stays capped`, async () => {
    let now = 1_800_000_000_000;
    const counter = await make(() => now);
    for (let i = 0; i < 3; i++) await counter.reserve("s", "img", 3);
    now += 23 * HOUR;
    const refused = await counter.reserve("s", "img", 3);
    now += 2 * HOUR; // an hour after the refused load, 25 h after the last granted one
    const again = await counter.reserve("s", "img", 3);
    if (refused.ok || again.ok) throw new Error(`the cap was lifted: ${JSON.stringify({ refused, again })}`);
    now += 25 * HOUR; // a day of silence: the session's counters are gone
    const fresh = await counter.reserve("s", "img", 3);
    if (!fresh.ok || fresh.count !== 1) throw new Error(`an idle session kept its count: ${JSON.stringify(fresh)}`);
  });
}
