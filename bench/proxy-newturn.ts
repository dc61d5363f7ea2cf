/**
 * Where a computer-use turn with one new screenshot spends its time beyond an all-seen turn
 * (docs/speed.md, "A computer-use turn through the proxy"), timed from outside: inside workerd
 * performance.now() does not advance during CPU work, so each request's wall time and the CPU its
 * workerd processes used (every thread, from Linux /proc: bench/workerd-processes.ts) are read
 * here, with its split between the main threads (JavaScript, WASM, the collector's pauses) and V8's
 * worker threads (concurrent marking and sweeping, optimising compiles). Per turn (16 to PROXY_SESSION_LAST_TURN of a light session), interleaved: the service with
 * the turn's new screenshot, the service again (all seen), the same new screenshot fitted alone by
 * the vision bench Worker (bench/vision-worker, the proxy's settings: 256 KiB budget, 1568 px)
 * less a header-only request of it, and, with PROXY_NEWTURN_SIDES=<checkout>,<checkout>... (e.g. a
 * copy of this tree whose fit-memo.ts makes a "fit" without the fitter), those services' new and
 * all-seen turns (rows named by the checkout's directory; `<checkout>+ledger-off` runs it with
 * LEDGER_MODE=off).
 * PROXY_NEWTURN_NOFIT=1 adds such a copy of HEAD, made here (`no-fit` rows). PROXY_NEWTURN_BARE=1
 * adds the bench's bare pass-through Worker (bench/bare-worker, forwarding to the same emulator) with
 * the same body each turn (`bare` row): the runtime's own floor for that turn. PROXY_NEWTURN_SEEN=N
 * sends each service's all-seen turn N times a turn (N samples of it). A tool, not a
 * benchmark of its own.
 * Run: PROXY_NEWTURN_NOFIT=1 npx tsx bench/proxy-newturn.ts   (PROXY_SESSION_LAST_TURN=N, default 40)
 */
import { execSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { startLocalStack } from "../scripts/local-stack";
import { FIRST_TURN, LAST_TURN, screenshot, send, turnBody } from "./computer-use-session";
import { median } from "./stats";
import { startBare } from "./bare-worker/start";
import { startWorker } from "./vision-worker/start";
import { workerdCpuMs, workerdFaults, workerdThreadCpuMs } from "./workerd-processes";

/** PROXY_NEWTURN_SEEN=N: each service's all-seen turn sent N times a turn (N samples), default 1. */
const SEEN_TIMES = Math.max(1, Number(process.env.PROXY_NEWTURN_SEEN ?? 1));

type Sample = { wall: number[]; cpu: number[]; main: number[]; v8: number[]; faults: number[] };
const sample = (): Sample => ({ wall: [], cpu: [], main: [], v8: [], faults: [] });
type Measured = { wall: number; cpu: number; main: number; v8: number; faults: number };

async function main() {
  const stack = await startLocalStack();
  const others: Array<{ name: string; stack: Awaited<ReturnType<typeof startLocalStack>> }> = [];
  // <checkout>[+ledger-off]: that checkout's service, with LEDGER_MODE=off when marked so.
  const sides = (process.env.PROXY_NEWTURN_SIDES ?? "").split(",").filter(Boolean);
  if (process.env.PROXY_NEWTURN_NOFIT) sides.unshift(noFitCopy());
  for (const side of sides) {
    const [dir, mark] = side.split("+") as [string, string | undefined];
    const vars: Record<string, string> = mark === "ledger-off" ? { LEDGER_MODE: "off" } : {};
    others.push({
      name: `${basename(dir)}${mark ? `+${mark}` : ""}`,
      stack: await startLocalStack({ cwd: dir, vars }),
    });
  }
  const vision = await startWorker();
  const bare = process.env.PROXY_NEWTURN_BARE ? await startBare("{}", `${stack.emulatorUrl}/llm/anthropic`) : null;
  const rows: Record<string, Sample> = { new: sample(), seen: sample(), fit: sample() };
  if (bare) rows.bare = sample();
  for (const { name } of others) Object.assign(rows, { [`${name} new`]: sample(), [`${name} seen`]: sample() });
  /** Wall ms and workerd CPU ms of one call. */
  async function timed(group: number, call: () => Promise<Response>): Promise<Measured> {
    const cpu0 = workerdCpuMs(group)!;
    const threads0 = workerdThreadCpuMs(group)!;
    const faults0 = workerdFaults(group)!;
    const start = performance.now();
    const response = await call();
    const answer = await response.arrayBuffer();
    const wall = performance.now() - start;
    if (!response.ok)
      throw new Error(
        `status ${response.status} (process group ${group}): ${Buffer.from(answer).toString().slice(0, 300)}`,
      );
    // The Worker's waitUntil work (its log lines, the ledger's flush) ends after the answer: let it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const threads = workerdThreadCpuMs(group)!;
    return {
      wall,
      cpu: workerdCpuMs(group)! - cpu0,
      main: threads.main - threads0.main,
      v8: threads.v8 - threads0.v8,
      faults: workerdFaults(group)! - faults0,
    };
  }
  const push = (row: string, got: Measured) => {
    rows[row]!.wall.push(got.wall);
    rows[row]!.cpu.push(got.cpu);
    rows[row]!.main.push(got.main);
    rows[row]!.v8.push(got.v8);
    rows[row]!.faults.push(got.faults);
  };
  try {
    const tag = `nt${Date.now().toString(36)}`;
    const shots: string[] = [];
    for (let i = 0; i < LAST_TURN; i++) shots.push(await screenshot(3000 + i, false));
    const task = `${tag}: book the cheapest flight`;
    const services = [
      { url: `${stack.url}/anthropic/v1/messages`, group: stack.processGroup, prefix: "" },
      ...others.map(({ name, stack: other }) => ({
        url: `${other.url}/anthropic/v1/messages`,
        group: other.processGroup,
        prefix: `${name} `,
      })),
    ];
    for (let turn = 1; turn < FIRST_TURN; turn++)
      for (const { url } of services) await (await send(url, turnBody(task, shots, turn, false), tag)).text();
    const fitCall = (query: string, bytes: Uint8Array) => () =>
      fetch(`${vision.url}/?${query}`, { method: "POST", body: bytes as BodyInit });
    for (let turn = FIRST_TURN; turn <= LAST_TURN; turn++) {
      const body = turnBody(task, shots, turn, false);
      const png = new Uint8Array(Buffer.from(shots[turn - 1]!, "base64"));
      const steps = [
        ...services.map((service) => async () => {
          push(`${service.prefix}new`, await timed(service.group, () => send(service.url, body, tag)));
          for (let i = 0; i < SEEN_TIMES; i++)
            push(`${service.prefix}seen`, await timed(service.group, () => send(service.url, body, tag)));
        }),
        ...(bare
          ? [async () => push("bare", await timed(bare.group, () => send(`${bare.url}/v1/messages`, body, tag)))]
          : []),
        async () => {
          const fit = await timed(vision.group, fitCall("budget=262144&encoder=baseline&simd=1", png));
          const header = await timed(vision.group, fitCall("mode=header", png));
          push("fit", {
            wall: fit.wall - header.wall,
            cpu: fit.cpu - header.cpu,
            main: fit.main - header.main,
            v8: fit.v8 - header.v8,
            faults: fit.faults - header.faults,
          });
        },
      ];
      for (const step of steps.sort(() => Math.random() - 0.5)) await step();
    }
  } finally {
    await stack.stop();
    for (const { stack: other } of others) await other.stop();
    vision.stop();
    bare?.stop();
  }
  const p = (row: string, what: keyof Sample) => median(rows[row]![what]);
  console.log(
    `turns ${FIRST_TURN}-${LAST_TURN}, p50; load average ${execSync("cat /proc/loadavg").toString().split(" ").slice(0, 3).join(" ")}`,
  );
  console.log(
    "| p50 per turn | wall ms | workerd CPU ms | main thread | V8 worker threads | page faults |\n|---|---:|---:|---:|---:|---:|",
  );
  const line = (row: string, at: (what: keyof Sample) => number) =>
    `| ${row} | ${at("wall").toFixed(1)} | ${at("cpu").toFixed(1)} | ${at("main").toFixed(1)} | ${at("v8").toFixed(1)} | ${at("faults").toFixed(0)} |`;
  for (const row of Object.keys(rows).filter((row) => rows[row]!.wall.length > 0))
    console.log(line(row, (what) => p(row, what)));
  console.log(line("new - seen - fit alone", (what) => p("new", what) - p("seen", what) - p("fit", what)));
}

/**
 * A copy of this checkout's HEAD (in a temporary directory named `no-fit`) whose fit-memo.ts makes
 * each "fit" without the fitter (the image's first 60,000 bytes, as PNG): everything a new image
 * costs the proxy but the fit itself (the hash, the store read and write, the base64 both ways, the
 * memory's copy).
 */
function noFitCopy(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "proxy-newturn-")), "no-fit");
  mkdirSync(dir);
  execSync(`git archive HEAD | tar -x -C ${JSON.stringify(dir)}`);
  symlinkSync(resolve("node_modules"), join(dir, "node_modules"));
  const file = join(dir, "shared/proxy/fit-memo.ts");
  const source = readFileSync(file, "utf8");
  const fitCall = /await ports\.fitImage\(bytes, \{[^}]*\}\);/;
  if (!fitCall.test(source)) throw new Error("fit-memo.ts no longer calls ports.fitImage as this tool expects");
  writeFileSync(file, source.replace(fitCall, `{ mediaType: "image/png", data: bytes.slice(0, 60_000) };`));
  return dir;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
