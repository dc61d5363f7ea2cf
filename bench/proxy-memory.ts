/**
 * The memory request (bench/proxy-memory-request.ts: about 32 MB, 100 or so screenshots, each
 * fitted) through the proxy, per checkout named in PROXY_MEMORY_SIDES (comma-separated), side by
 * side: each run starts, per side and per mode, a fresh `wrangler dev` whose workerd logs V8's
 * collections (`--trace-gc-nvp --trace-gc-verbose`), sends the request once and stops it, the
 * sides and modes in a new random order each run. Modes:
 * - `watch`: the heap read over the inspector while the request runs (every 1 ms it is answered),
 *   and from the collection log the heap's objects (garbage included) as each collection began,
 *   the backing stores after it, and what a full collection left (what was live);
 * - `cap<MB>` (e.g. `cap128`): the heap capped like a deployed isolate's (`--max-heap-size=<MB>`):
 *   does the request still succeed? The smallest cap it succeeds under is what it needs.
 * After the answer, a forced collection: what the isolate keeps (its fit memory, the compiled code).
 * PROXY_MEMORY_TIMELINE=1 prints each inspector reading with its time; PROXY_MEMORY_REQUESTS=2 sends a
 * second request of other screenshots after the first, to the same isolate (its fit memory full).
 *
 * Needs a `wrangler` that passes V8 flags on to workerd, in each checkout's node_modules
 * (bench/gc-log.ts says how). A tool, not a benchmark of its own.
 * Run: PROXY_MEMORY_SIDES=<checkout>,<checkout> [PROXY_MEMORY_RUNS=3] [PROXY_MEMORY_MODES=watch,cap128]
 *   npx tsx bench/proxy-memory.ts
 */
import {
  load,
  MEMORY_TABLE_HEAD,
  type MemoryMode,
  memoryRequest,
  memoryRun,
  memoryTableRow,
} from "./proxy-memory-request";

async function main() {
  const checkouts = (process.env.PROXY_MEMORY_SIDES ?? ".").split(",").filter(Boolean);
  const runs = Number(process.env.PROXY_MEMORY_RUNS ?? 3);
  const modes = (process.env.PROXY_MEMORY_MODES ?? "watch,cap128").split(",") as MemoryMode[];
  const tag = `mem${Date.now().toString(36)}`;
  const { body, images } = await memoryRequest(tag);
  // PROXY_MEMORY_REQUESTS=2: a second request of other screenshots on the same isolate, after the first.
  const bodies = [body];
  for (let i = 1; i < Number(process.env.PROXY_MEMORY_REQUESTS ?? 1); i++)
    bodies.push((await memoryRequest(tag, 500 + 1000 * i)).body);
  console.log(
    `${(body.length / 1e6).toFixed(1)} MB, ${images} screenshots; ${new Date().toISOString()}, load average ${load()}`,
  );
  console.log(MEMORY_TABLE_HEAD);
  for (let run = 1; run <= runs; run++) {
    const order = checkouts.flatMap((checkout) => modes.map((mode) => ({ checkout, mode })));
    order.sort(() => Math.random() - 0.5);
    for (const { checkout, mode } of order) {
      const row = await memoryRun(checkout, mode, bodies, tag, run);
      console.log(memoryTableRow(row));
      if (process.env.PROXY_MEMORY_TIMELINE === "1") console.log(`    readings: ${row.timeline}`);
    }
  }
  console.log(`load average at the end ${load()}, ${new Date().toISOString()}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
