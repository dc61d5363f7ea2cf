/**
 * The typical screenshots and the computer-use session's screenshot fitted in workerd (the bench
 * Worker, bench/vision-worker, under `wrangler dev`) by this checkout and by another one side by
 * side (WORKERD_SIDES_BEFORE=<checkout>, e.g. /work/main; its node_modules must be installed):
 * per round, each input goes to each side in turn. Per fit: workerd's CPU time and its minor page
 * faults (Linux /proc: every workerd process of the side), each less the same for a header-only
 * request of the same body (the upload). Medians of ROUNDS (default 7) after two warm-up fits.
 * Run: WORKERD_SIDES_BEFORE=/work/main npx tsx bench/vision-workerd-sides.ts [name-substring...]
 */
import { loadavg } from "node:os";
import { screenshot } from "./computer-use-session";
import { median } from "./stats";
import { makeScreenshotInputs } from "./vision-inputs";
import { startWorker } from "./vision-worker/start";
import { workerdFaults } from "./workerd-processes";

const rounds = Number(process.env.ROUNDS ?? 7);
const only = process.argv.slice(2);
const roots: Array<[string, string]> = [["this tree", process.cwd()]];
if (process.env.WORKERD_SIDES_BEFORE) roots.unshift(["before", process.env.WORKERD_SIDES_BEFORE]);

const all: Array<[string, Uint8Array<ArrayBuffer>]> = (await makeScreenshotInputs()).map(([n, b]) => [
  n,
  new Uint8Array(b),
]);
all.push(["computer-use session 1920x1080 PNG", new Uint8Array(Buffer.from(await screenshot(16, false), "base64"))]);
const inputs = all.filter(([name]) => !only.length || only.some((o) => name.includes(o)));

type Worker = Awaited<ReturnType<typeof startWorker>>;
const sides: Array<{ label: string; worker: Worker }> = [];
for (const [label, root] of roots) sides.push({ label, worker: await startWorker(root) });
try {
  /** workerd's CPU ms and minor faults for one request. */
  async function measure(worker: Worker, query: string, body: Uint8Array<ArrayBuffer>) {
    const cpu = worker.cpuMs()!,
      faults = workerdFaults(worker.group)!;
    const response = await fetch(`${worker.url}/?${query}`, { method: "POST", body });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`worker answered ${response.status}`);
    return { cpu: worker.cpuMs()! - cpu, faults: workerdFaults(worker.group)! - faults };
  }
  const FIT = "budget=262144&encoder=baseline&simd=1";
  console.log(
    `load average at the start ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  console.log(
    `| input | ${sides.map((s) => `${s.label}: CPU ms, page faults`).join(" | ")} |\n|---|${sides.map(() => "---:").join("|")}|`,
  );
  for (const [name, bytes] of inputs) {
    for (const side of sides) for (let i = 0; i < 2; i++) await measure(side.worker, FIT, bytes);
    const got = sides.map(() => ({ cpu: [] as number[], faults: [] as number[] }));
    for (let r = 0; r < rounds; r++)
      for (const [i, side] of sides.entries()) {
        const fit = await measure(side.worker, FIT, bytes);
        const header = await measure(side.worker, "mode=header", bytes);
        got[i]!.cpu.push(fit.cpu - header.cpu);
        got[i]!.faults.push(fit.faults - header.faults);
      }
    console.log(
      `| ${name} | ${got.map((g) => `${median(g.cpu).toFixed(1)}, ${median(g.faults).toFixed(0)}`).join(" | ")} |`,
    );
  }
  console.log(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
} finally {
  for (const side of sides) side.worker.stop();
}
