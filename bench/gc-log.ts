/**
 * V8's collection log of a workerd under `wrangler dev` (bench/proxy-gc.ts, bench/proxy-memory.ts):
 * a wrapper that tees workerd's standard output to a file, and the GC events read back from it.
 *
 * V8 flags reach workerd only through a `wrangler` whose miniflare passes
 * MINIFLARE_WORKERD_V8_FLAGS on to workerd's config (wrangler 4.86's does not; a throwaway copy of
 * its `miniflare/dist/src/index.js` with `v8Flags: process.env.MINIFLARE_WORKERD_V8_FLAGS.split(" ")`
 * beside `structuredLogging` does), in the checkout's node_modules.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** One collection (`--trace-gc-nvp`: one JSON object a line), with the isolate that logged it. */
export interface GcEvent {
  /** `pid:address` of the isolate (a workerd process runs several: the service, miniflare's own). */
  isolate: string;
  /** "s": a scavenge; anything else a full collection. */
  gc: string;
  /** Bytes the scavenge moved into the old generation. */
  promoted?: number;
  /** The heap's object bytes (garbage included) when the collection began, and after it. */
  start_object_size?: number;
  end_object_size?: number;
  /** ArrayBuffer backing stores after the collection, in bytes (`--trace-gc-verbose`), if logged. */
  backingStore?: number;
  /** The old generation's limit after the collection, in bytes. */
  old_gen_allocation_limit?: number;
}

export interface GcLog {
  path: string;
  /** Read so far (characters of the file). */
  read: number;
  /** Lines two threads wrote into each other, not counted. */
  garbled: number;
}

/** A new empty log file. */
export function gcLog(): GcLog {
  const path = join(mkdtempSync(join(tmpdir(), "proxy-gc-log-")), "workerd.log");
  writeFileSync(path, "");
  return { path, read: 0, garbled: 0 };
}

/** Whether `checkout`'s wrangler passes MINIFLARE_WORKERD_V8_FLAGS on to workerd (see above). */
export function v8FlagsReachWorkerd(checkout: string): boolean {
  const wrangler = createRequire(join(resolve(checkout), "node_modules/wrangler/package.json"));
  return readFileSync(wrangler.resolve("miniflare"), "utf8").includes("MINIFLARE_WORKERD_V8_FLAGS");
}

/** A wrapper that runs `checkout`'s workerd with its standard output teed to `log`. */
export function teeingWorkerd(checkout: string, log: GcLog): string {
  const wrangler = createRequire(join(resolve(checkout), "node_modules/wrangler/package.json"));
  const workerd = (wrangler("workerd") as { default: string }).default;
  const script = join(mkdtempSync(join(tmpdir(), "proxy-gc-")), "workerd");
  writeFileSync(script, `#!/bin/bash\nexec ${JSON.stringify(workerd)} "$@" > >(tee -a ${JSON.stringify(log.path)})\n`);
  chmodSync(script, 0o755);
  return script;
}

/** The GC events written to the log since the last read, and the log's other new lines. */
export function newGcEvents(log: GcLog): { events: GcEvent[]; lines: string[] } {
  const text = readFileSync(log.path, "utf8");
  // Whole lines only: the tee may be halfway through one.
  const end = text.lastIndexOf("\n") + 1;
  const fresh = text.slice(log.read, Math.max(log.read, end));
  log.read = Math.max(log.read, end);
  const events: GcEvent[] = [];
  const lines = fresh.split("\n");
  for (const line of lines) {
    const isolate = /^\[(\d+:0x[0-9a-f]+)/.exec(line)?.[1] ?? "";
    const backing = /Backing store memory:\s+(\d+) KB/.exec(line);
    if (backing) {
      // `--trace-gc-verbose` writes the heap's statistics after the event's own line.
      const last = events.findLast((event) => event.isolate === isolate);
      if (last) last.backingStore = Number(backing[1]) * 1024;
      continue;
    }
    const json = /GC: (\{.*\})\s*$/.exec(line)?.[1];
    if (json === undefined) continue;
    try {
      events.push({ ...(JSON.parse(json) as Omit<GcEvent, "isolate">), isolate });
    } catch {
      // Two threads' lines run together: not counted (rare).
      log.garbled += 1;
    }
  }
  return { events, lines };
}
