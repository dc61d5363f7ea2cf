/**
 * A CPU profile of the service's isolate on the computer-use session (bench/computer-use-session.ts):
 * the service under `wrangler dev --minify=false`, its V8 profiler started through the inspector
 * (Chrome DevTools protocol), turns sent one after another, and the samples summed by function
 * (docs/speed.md, "A computer-use turn through the proxy"): self time, and the inclusive time of the
 * functions whose names `PROXY_PROFILE_TOTALS` lists (comma-separated; default the proxy's steps).
 * Not a benchmark of its own: a tool.
 * Run: npx tsx bench/proxy-profile.ts [seen|new|first]   (PROXY_PROFILE_TURNS=N turns, default 20;
 * "first" sends all-seen turns streamed and reads each to its end; PROXY_PROFILE_OUT=file.cpuprofile
 * keeps the profile for DevTools)
 */
import { writeFileSync } from "node:fs";
import { inspectorSession } from "./inspector";
import { startLocalStack } from "../scripts/local-stack";
import { screenshot, send, turnBody } from "./computer-use-session";
import { answerTimes } from "./stats";

const TURNS = Number(process.env.PROXY_PROFILE_TURNS ?? 20);
const mode = process.argv[2] === "new" ? "new" : process.argv[2] === "first" ? "first" : "seen";
const TOTALS = (
  process.env.PROXY_PROFILE_TOTALS ??
  "proxyRequest,transformedBody,transformConversation,answer,withoutKey,relayAnswer,decodeUtf8Body,parseJsonText,encodeJson,sha256Hex,fitImage,add,flush,record,pull,transform"
).split(",");

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; scriptId?: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

async function main() {
  const stack = await startLocalStack({ args: ["--minify=false"], cwd: process.env.PROXY_PROFILE_CWD });
  try {
    const shots: string[] = [];
    for (let i = 0; i < TURNS + 10; i++) shots.push(await screenshot(3000 + i, i % 2 === 1));
    const task = `profile ${Date.now().toString(36)}`;
    const session = `${task}-session`;
    const url = `${stack.url}/anthropic/v1/messages`;
    const turn = async (n: number, stream = false) => {
      const { first, end, response } = await answerTimes(() => send(url, turnBody(task, shots, n, stream), session));
      if (!response.ok) throw new Error(`status ${response.status}`);
      return stream ? first : end;
    };
    // On "seen" and "first", every turn profiled re-sends screenshots the service has all seen; on "new", each adds one.
    for (let n = 1; n <= (mode === "new" ? 10 : 10 + TURNS); n++) await turn(n);
    const devtools = await inspectorSession(stack.inspectorPort);
    await devtools.call("Profiler.enable");
    await devtools.call("Profiler.setSamplingInterval", { interval: 100 });
    await devtools.call("Profiler.start");
    const wall: number[] = [];
    for (let n = 11; n < 11 + TURNS; n++) wall.push(await turn(n, mode === "first"));
    const { profile } = await devtools.call<{ profile: Profile }>("Profiler.stop");
    if (process.env.PROXY_PROFILE_OUT) {
      writeFileSync(process.env.PROXY_PROFILE_OUT, JSON.stringify(profile));
      // The bundle the line numbers point into, beside the profile.
      const script = profile.nodes.find((node) => node.callFrame.url.endsWith("index.js"))?.callFrame.scriptId;
      await devtools.call("Debugger.enable");
      const { scriptSource } = await devtools.call<{ scriptSource?: string }>("Debugger.getScriptSource", {
        scriptId: script,
      });
      if (scriptSource) writeFileSync(`${process.env.PROXY_PROFILE_OUT}.js`, scriptSource);
    }
    devtools.close();
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const self = new Map<number, number>();
    profile.samples.forEach((node, i) => self.set(node, (self.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0)));
    const totals = new Map<string, number>();
    const inclusive = new Map<string, number>();
    let all = 0;
    const nameOf = (node: ProfileNode) => {
      const frame = node.callFrame;
      const file = frame.url.split("/").slice(-2).join("/");
      return `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    };
    for (const [node, micros] of self) {
      const frame = byId.get(node)!.callFrame;
      const name = nameOf(byId.get(node)!);
      totals.set(name, (totals.get(name) ?? 0) + micros);
      if (frame.functionName !== "(idle)" && frame.functionName !== "(program)") all += micros;
      // Each listed function on the sample's stack counts the sample once.
      const seen = new Set<string>();
      for (let id: number | undefined = node; id !== undefined; id = parent.get(id)) {
        const fn = byId.get(id)!.callFrame.functionName;
        if (TOTALS.includes(fn)) seen.add(nameOf(byId.get(id)!));
      }
      for (const name of seen) inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
    }
    const per = TURNS;
    console.log(`${mode} turns: ${TURNS}, wall p50 ${wall.sort((a, b) => a - b)[wall.length >> 1]!.toFixed(1)} ms`);
    console.log(`busy (not idle/program) per profiled turn: ${(all / 1000 / per).toFixed(2)} ms`);
    console.log("self time:");
    for (const [name, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 40))
      console.log(`${(micros / 1000 / per).toFixed(2).padStart(8)} ms/turn  ${name}`);
    console.log("inclusive time:");
    for (const [name, micros] of [...inclusive].sort((a, b) => b[1] - a[1]))
      console.log(`${(micros / 1000 / per).toFixed(2).padStart(8)} ms/turn  ${name}`);
  } finally {
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
