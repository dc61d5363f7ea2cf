/**
 * A CPU profile of the service's isolate on the computer-use session (bench/computer-use-session.ts):
 * the service under `wrangler dev --minify=false`, its V8 profiler started through the inspector
 * (Chrome DevTools protocol), turns sent one after another, and the samples' self time summed by
 * function (docs/benchmarks.md, "A computer-use session"). Not a benchmark of its own: a tool.
 * Run: npx tsx bench/proxy-profile.ts [seen|new]   (PROXY_PROFILE_TURNS=N turns, default 20)
 */
import { inspectorSession } from "./inspector";
import { startLocalStack } from "../scripts/local-stack";
import { screenshot, send, turnBody } from "./computer-use-session";

const TURNS = Number(process.env.PROXY_PROFILE_TURNS ?? 20);
const mode = process.argv[2] === "new" ? "new" : "seen";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

async function main() {
  const stack = await startLocalStack({ args: ["--minify=false"] });
  try {
    const shots: string[] = [];
    for (let i = 0; i < TURNS + 10; i++) shots.push(await screenshot(3000 + i, i % 2 === 1));
    const task = `profile ${Date.now().toString(36)}`;
    const session = `${task}-session`;
    const url = `${stack.url}/anthropic/v1/messages`;
    const turn = async (n: number) => {
      const start = performance.now();
      const response = await send(url, turnBody(task, shots, n, false), session);
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`status ${response.status}`);
      return performance.now() - start;
    };
    // On "seen", every turn profiled re-sends screenshots the service has all seen; on "new", each adds one.
    for (let n = 1; n <= (mode === "seen" ? 10 + TURNS : 10); n++) await turn(n);
    const devtools = await inspectorSession(stack.inspectorPort);
    await devtools.call("Profiler.enable");
    await devtools.call("Profiler.setSamplingInterval", { interval: 100 });
    await devtools.call("Profiler.start");
    const wall: number[] = [];
    for (let n = 11; n < 11 + TURNS; n++) wall.push(await turn(n));
    const { profile } = await devtools.call<{ profile: Profile }>("Profiler.stop");
    devtools.close();
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const self = new Map<number, number>();
    profile.samples.forEach((node, i) => self.set(node, (self.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0)));
    const totals = new Map<string, number>();
    let all = 0;
    for (const [node, micros] of self) {
      const frame = byId.get(node)!.callFrame;
      const file = frame.url.split("/").slice(-2).join("/");
      const name = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
      totals.set(name, (totals.get(name) ?? 0) + micros);
      if (frame.functionName !== "(idle)" && frame.functionName !== "(program)") all += micros;
    }
    const per = TURNS;
    console.log(`${mode} turns: ${TURNS}, wall p50 ${wall.sort((a, b) => a - b)[wall.length >> 1]!.toFixed(1)} ms`);
    console.log(`busy (not idle/program) per profiled turn: ${(all / 1000 / per).toFixed(2)} ms`);
    for (const [name, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 40))
      console.log(`${(micros / 1000 / per).toFixed(2).padStart(8)} ms/turn  ${name}`);
  } finally {
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
