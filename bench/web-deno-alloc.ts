/**
 * What a Deno web_search cache hit allocates, by function: each checkout's deno/main.ts (a
 * single-process, in-memory Deno KV) answers a warm-up, then HITS sequential hits under V8's
 * sampling heap profiler over the inspector (objects the GC collected since counted too); prints
 * the bytes a hit allocates and the functions that allocate most (the innermost frame, with the
 * nearest frame of a source file when the allocation is the runtime's).
 * Run: DIRS=<dir>,<dir> npx tsx bench/web-deno-alloc.ts   (default DIRS=.; HITS=n, default 3000)
 */
import { resolve } from "node:path";
import { inspectorSession } from "./inspector";
import { emulatorVars, freePort, startLocalStack } from "../scripts/local-stack";
import { DENO_RUN, startDeno } from "../test/support/deno-service";

const HITS = Number(process.env.HITS ?? 3000);
const WARM_UP = 1000;
const DIRS = (process.env.DIRS ?? ".").split(",");
const TOP = 15;

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** Bytes a hit allocates, in all and by allocating function. */
async function allocations(dir: string, emulatorUrl: string): Promise<{ total: number; top: Array<[string, number]> }> {
  const port = await freePort();
  const env = { ...emulatorVars(emulatorUrl), DENO_KV_PATH: ":memory:", SECURITY_ALLOW_ANONYMOUS: "true" };
  const service = await startDeno({
    env,
    command: [
      "node_modules/.bin/deno",
      "run",
      `--inspect=127.0.0.1:${port}`,
      ...DENO_RUN.slice(1),
      `${resolve(dir)}/deno/main.ts`,
    ],
  });
  try {
    const hit = () =>
      fetch(`${service.url}/v1/web_search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "alloc hit" }),
      }).then((response) => response.arrayBuffer());
    for (let i = 0; i < WARM_UP; i++) await hit();
    const cdp = await inspectorSession(port);
    await cdp.call("HeapProfiler.enable");
    await cdp.call("HeapProfiler.startSampling", {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    for (let i = 0; i < HITS; i++) await hit();
    const { profile } = await cdp.call<{ profile: { head: HeapNode } }>("HeapProfiler.stopSampling");
    cdp.close();
    const byFunction = new Map<string, number>();
    let total = 0;
    const short = (url: string) => url.replace(/^.*\/(node_modules\/|ext:)?/, "");
    const walk = (node: HeapNode, source: string) => {
      const { functionName, url } = node.callFrame;
      const here = url.startsWith("file:") ? `${functionName || "(anonymous)"} ${short(url)}` : source;
      if (node.selfSize > 0) {
        const label = url.startsWith("file:")
          ? here
          : `${functionName || "(anonymous)"} [${short(url) || "native"}] from ${source || "the runtime"}`;
        byFunction.set(label, (byFunction.get(label) ?? 0) + node.selfSize);
        total += node.selfSize;
      }
      for (const child of node.children) walk(child, here);
    };
    walk(profile.head, "");
    const top = [...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([label, bytes]): [string, number] => [label, bytes / HITS]);
    return { total: total / HITS, top };
  } finally {
    await service.stop();
  }
}

async function main() {
  const stack = await startLocalStack();
  try {
    for (const dir of DIRS) {
      const { total, top } = await allocations(dir, stack.emulatorUrl);
      console.log(`### ${dir}: ${total.toFixed(0)} bytes allocated a hit (${HITS} hits)\n`);
      for (const [label, bytes] of top) console.log(`- ${bytes.toFixed(0)} ${label}`);
      console.log("");
    }
  } finally {
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
