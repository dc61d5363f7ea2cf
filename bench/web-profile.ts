/**
 * Where a web_search cache hit's time goes inside the isolate, on workerd (`wrangler dev`, not
 * minified so that the bundle keeps its module comments) and on Deno (`deno/main.ts`), each next to
 * its bare baseline (bench/bare-worker, bench/bare-deno): the V8 CPU profiler over the inspector
 * (Chrome DevTools protocol) samples HITS sequential hits after a warm-up, and each sample is
 * charged to a stage by the source module of the innermost frame that has one (a native function
 * such as JSON.stringify is charged to its caller's module). Prints CPU µs per request per stage.
 * Not a benchmark (the profiler slows what it samples): it shows which stages matter.
 * `workerd-direct`: the same on workerd without wrangler (bench/workerd-direct.ts), through
 * workerd's own inspector.
 * Run: npx tsx bench/web-profile.ts [workerd|workerd-direct|deno]   (HITS=n, default 3000;
 * PROFILE_OUT=<prefix> also writes each .cpuprofile)
 */
import { writeFileSync } from "node:fs";
import { inspectorSession } from "./inspector";
import { emulatorVars, freePort, startLocalStack } from "../scripts/local-stack";
import { DENO_RUN, startDeno } from "../test/support/deno-service";
import { startBare } from "./bare-worker/start";
import { startDirect } from "./workerd-direct";

const HITS = Number(process.env.HITS ?? 3000);
const WARM_UP = 500;
const wanted = process.argv.slice(2);

interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Source module (as the bundle or Deno names it) → stage; the first rule that matches wins. */
const STAGES: Array<[RegExp, string]> = [
  [/hono\//, "routing + middleware (Hono)"],
  [/zod\/|shared\/http\/validate\.ts/, "validation (zod + unknown fields)"],
  [/shared\/http\/body\.ts/, "body read + JSON parse"],
  [/shared\/http\/auth\.ts/, "auth"],
  [/shared\/safety\/origin\.ts/, "origin gate"],
  // workers/log.ts writes the lines after the response; workerd formats each through node:util's inspect.
  [
    /shared\/app\/request-log\.ts|shared\/log\.ts|shared\/safety\/secrets\.ts|workers\/log\.ts|internal_inspect/,
    "request log",
  ],
  [/shared\/stats\/ledger\.ts|shared\/stats\/counters\.ts/, "ledger record + flush"],
  [/shared\/web\/query\.ts|shared\/hash\.ts/, "cache key (normalise + hash)"],
  [/cache\.kv\.ts|kv-busy\.ts/, "KV get + entry parse"],
  [/shared\/web\/(cache|flight)\.ts/, "freshness + cut"],
  [/shared\/web\/freshness\.schema\.ts/, "Cache-Control header fields"],
  [/shared\/web\/search\.service\.ts/, "search service (slice, answer)"],
  [/shared\/http\/respond\.ts/, "response (JSON.stringify + Response)"],
  [/shared\/tools\//, "tool glue"],
  [/shared\/config\//, "config"],
  [/shared\/app\/app\.ts/, "app middleware (request id, headers)"],
  [/workers\/index\.ts|deno\/main\.ts/, "runtime entry (ledger flush scheduling)"],
  [/bench\/bare-/, "bare route"],
  [/^ext:|^node:|deno:/, "Deno runtime (HTTP server, Request/Response)"],
];

/** Each bundled script's lines → the module the bundler's `// path` comment names. */
function modulesOf(source: string): (line: number) => string {
  const starts: Array<[number, string]> = [];
  source.split("\n").forEach((line, i) => {
    const m = /^\/\/ ((?:\.\.\/)*[\w@./-]+\.(?:ts|js|mjs|cjs))$/.exec(line);
    if (m) starts.push([i, m[1]!]);
  });
  return (line) => {
    let found = "";
    for (const [start, path] of starts) {
      if (start > line) break;
      found = path;
    }
    return found;
  };
}

async function profileHits(
  port: number,
  request: () => Promise<Response>,
): Promise<{ perRequestUs: Map<string, number>; top: Array<[string, number]> }> {
  for (let i = 0; i < WARM_UP; i++) await (await request()).arrayBuffer();
  const cdp = await inspectorSession(port);
  await cdp.call("Profiler.enable");
  await cdp.call("Profiler.setSamplingInterval", { interval: 50 });
  await cdp.call("Profiler.start");
  for (let i = 0; i < HITS; i++) await (await request()).arrayBuffer();
  const { profile } = await cdp.call<{ profile: Profile }>("Profiler.stop");
  if (process.env.PROFILE_OUT) writeFileSync(`${process.env.PROFILE_OUT}-${port}.cpuprofile`, JSON.stringify(profile));
  // Sources only now, so the debugger is off while the hits run.
  await cdp.call("Debugger.enable");
  const modules = new Map<string, (line: number) => string>();
  for (const node of profile.nodes) {
    const { scriptId, url } = node.callFrame;
    if (scriptId === "0" || modules.has(scriptId)) continue;
    if (url.startsWith("file:") || url.startsWith("ext:") || url.startsWith("node:")) {
      modules.set(scriptId, () => url);
      continue;
    }
    const { scriptSource } = await cdp.call<{ scriptSource?: string }>("Debugger.getScriptSource", { scriptId });
    const map = modulesOf(scriptSource ?? "");
    modules.set(scriptId, (line) => map(line) || url);
  }
  await cdp.call("Debugger.disable");
  cdp.close();

  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const moduleOf = (node: ProfileNode) =>
    node.callFrame.scriptId === "0" ? "" : (modules.get(node.callFrame.scriptId)?.(node.callFrame.lineNumber) ?? "");
  const stageOfNode = new Map<number, string>();
  const stageOf = (id: number): string => {
    const known = stageOfNode.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const name = node.callFrame.functionName;
    let stage: string;
    if (name === "(idle)" || name === "(program)" || name === "(garbage collector)" || name === "(root)") stage = name;
    else {
      const module = moduleOf(node);
      const rule = module ? STAGES.find(([re]) => re.test(module)) : undefined;
      const up = parent.get(id);
      stage = rule ? rule[1] : module ? `other: ${module}` : up === undefined ? "(root)" : stageOf(up);
    }
    stageOfNode.set(id, stage);
    return stage;
  };
  const totals = new Map<string, number>();
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? 0;
    const stage = stageOf(id);
    totals.set(stage, (totals.get(stage) ?? 0) + us);
    const node = byId.get(id)!;
    const label = `${node.callFrame.functionName || "(anonymous)"} [${moduleOf(node) || "native"}]`;
    self.set(label, (self.get(label) ?? 0) + us);
  });
  const perRequestUs = new Map([...totals].map(([stage, us]) => [stage, us / HITS]));
  const top = [...self]
    .filter(([label]) => !label.startsWith("(idle)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([label, us]): [string, number] => [label, us / HITS]);
  return { perRequestUs, top };
}

function table(title: string, rows: Map<string, number>, base: Map<string, number>): string[] {
  const busy = (m: Map<string, number>) => [...m].filter(([s]) => s !== "(idle)").reduce((sum, [, us]) => sum + us, 0);
  const lines = [`### ${title}`, "", "| stage | service µs / hit | bare µs / request |", "|---|---|---|"];
  const stages = [...new Set([...rows.keys(), ...base.keys()])].filter((s) => s !== "(idle)");
  stages.sort((a, b) => (rows.get(b) ?? 0) - (rows.get(a) ?? 0));
  for (const stage of stages)
    lines.push(`| ${stage} | ${(rows.get(stage) ?? 0).toFixed(1)} | ${(base.get(stage) ?? 0).toFixed(1)} |`);
  lines.push(`| **CPU in the isolate, total** | **${busy(rows).toFixed(1)}** | **${busy(base).toFixed(1)}** |`, "");
  return lines;
}

const searchAt = (base: string, query: string) => () =>
  fetch(`${base}/v1/web_search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });

async function workerd(lines: string[]) {
  const stack = await startLocalStack({ args: ["--minify", "false"] });
  const query = `profile hit ${Date.now().toString(36)}`;
  const payload = await (await searchAt(stack.url, query)()).text();
  const inspectorPort = await freePort();
  const bare = await startBare(payload.replace('"cache":"miss"', '"cache":"hit"'), undefined, inspectorPort);
  try {
    const service = await profileHits(stack.inspectorPort, searchAt(stack.url, query));
    const baseline = await profileHits(inspectorPort, () => fetch(bare.url, { method: "POST", body: "{}" }));
    lines.push(...table(`workerd (wrangler dev), ${HITS} hits`, service.perRequestUs, baseline.perRequestUs));
    lines.push(
      "Top self time, service (µs / hit):",
      "",
      ...service.top.map(([l, us]) => `- ${us.toFixed(1)} ${l}`),
      "",
    );
  } finally {
    bare.stop();
    await stack.stop();
  }
}

/** The same on workerd without wrangler dev (bench/workerd-direct.ts): workerd's own inspector, no proxy in between. */
async function workerdDirect(lines: string[]) {
  const stack = await startLocalStack();
  const [inspectorPort, bareInspector] = [await freePort(), await freePort()];
  const query = `profile direct hit ${Date.now().toString(36)}`;
  const unminified = ["--minify=false"];
  const service = await startDirect({
    vars: emulatorVars(stack.emulatorUrl),
    logs: "workerd",
    inspectorPort,
    buildArgs: unminified,
  });
  const payload = await (await searchAt(service.url, query)()).text();
  const bare = await startDirect({
    config: "bench/bare-worker/wrangler.toml",
    vars: { PAYLOAD: payload.replace('"cache":"miss"', '"cache":"hit"') },
    logs: "workerd",
    inspectorPort: bareInspector,
    buildArgs: unminified,
  });
  try {
    const hit = await profileHits(inspectorPort, searchAt(service.url, query));
    const baseline = await profileHits(bareInspector, () => fetch(bare.url, { method: "POST", body: "{}" }));
    lines.push(...table(`workerd without wrangler, ${HITS} hits`, hit.perRequestUs, baseline.perRequestUs));
    lines.push("Top self time, service (µs / hit):", "", ...hit.top.map(([l, us]) => `- ${us.toFixed(1)} ${l}`), "");
  } finally {
    bare.stop();
    service.stop();
    await stack.stop();
  }
}

async function deno(lines: string[]) {
  const stack = await startLocalStack();
  const inspectPort = await freePort();
  const bareInspect = await freePort();
  const env = { ...emulatorVars(stack.emulatorUrl), DENO_KV_PATH: ":memory:", SECURITY_ALLOW_ANONYMOUS: "true" };
  const service = await startDeno({
    env,
    command: [
      "node_modules/.bin/deno",
      "run",
      `--inspect=127.0.0.1:${inspectPort}`,
      ...DENO_RUN.slice(1),
      "deno/main.ts",
    ],
  });
  const query = `profile deno hit ${Date.now().toString(36)}`;
  const payload = await (await searchAt(service.url, query)()).text();
  const bare = await startDeno({
    env: { PAYLOAD: payload.replace('"cache":"miss"', '"cache":"hit"') },
    command: [
      "node_modules/.bin/deno",
      "run",
      `--inspect=127.0.0.1:${bareInspect}`,
      "--allow-net",
      "--allow-env",
      "bench/bare-deno/main.ts",
    ],
    healthPath: "/",
  });
  try {
    const hit = await profileHits(inspectPort, searchAt(service.url, query));
    const baseline = await profileHits(bareInspect, () => fetch(bare.url, { method: "POST", body: "{}" }));
    lines.push(...table(`Deno, ${HITS} hits`, hit.perRequestUs, baseline.perRequestUs));
    lines.push("Top self time, service (µs / hit):", "", ...hit.top.map(([l, us]) => `- ${us.toFixed(1)} ${l}`), "");
  } finally {
    await bare.stop();
    await service.stop();
    await stack.stop();
  }
}

async function main() {
  const lines: string[] = [];
  if (wanted.length === 0 || wanted.includes("workerd")) await workerd(lines);
  if (wanted.length === 0 || wanted.includes("workerd-direct")) await workerdDirect(lines);
  if (wanted.length === 0 || wanted.includes("deno")) await deno(lines);
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
