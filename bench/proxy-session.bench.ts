/**
 * A computer-use session through the provider proxy (docs/benchmarks.md, "A computer-use
 * session"): one new 1920x1080 screenshot per turn (a UI-like PNG of about 88 KB, over the long edge
 * so the proxy fits it), turns 16 to 40, one light session and one dark. Each turn is sent, side by
 * side and in a random order of sides per turn, directly to the LLM emulator, through the bare
 * pass-through Worker (`bench/bare-worker`) and through the service, both under `wrangler dev`; on
 * each side the turn is sent three times: with its new screenshot, again (every screenshot seen;
 * the time to its answer's headers is a row too, to set beside the first streamed event), and again
 * streamed (the first event timed; its body differs from the plain turn's by the emulator's pause marker). Run: npm run bench -- proxy-session (also part of
 * `npm run bench -- proxy`). With PROXY_BENCH_BEFORE=<another checkout>, that checkout's service
 * runs as a fourth side in the same run (its rows: "before"); with PROXY_BENCH_LEDGER_OFF=1, this
 * checkout's service with the ledger off (`LEDGER_MODE=off`) runs as another (its rows: "ledger off"),
 * so what the savings ledger costs a turn is measured on the same loaded box.
 */
import { FIRST_TURN, HEIGHT, LAST_TURN, screenshot, send, turnBody, WIDTH } from "./computer-use-session";
import { startLocalStack } from "../scripts/local-stack";
import { startBare } from "./bare-worker/start";
import { answerTimes, median, ms } from "./stats";
import { execSync } from "node:child_process";

/** Milliseconds to the answer's last byte, or to its first body chunk; `head` gets the time to its headers. */
async function timeTo(call: () => Promise<Response>, first: boolean, head?: (ms: number) => void): Promise<number> {
  const times = await answerTimes(call);
  if (!times.response.ok) throw new Error(`status ${times.response.status}`);
  head?.(times.head);
  return first ? times.first : times.end;
}

type Row = "new" | "seen" | "head" | "first";
const ROWS: readonly Row[] = ["new", "seen", "head", "first"];

async function main() {
  const stack = await startLocalStack();
  const beforeDir = process.env.PROXY_BENCH_BEFORE;
  const before = beforeDir ? await startLocalStack({ cwd: beforeDir }) : null;
  const ledgerOff = process.env.PROXY_BENCH_LEDGER_OFF ? await startLocalStack({ vars: { LEDGER_MODE: "off" } }) : null;
  const bare = await startBare("{}", `${stack.emulatorUrl}/llm/anthropic`);
  type Side = "direct" | "bare" | "service" | "before" | "off";
  const sides: Partial<Record<Side, string>> = {
    direct: `${stack.emulatorUrl}/llm/anthropic/v1/messages`,
    bare: `${bare.url}/v1/messages`,
    service: `${stack.url}/anthropic/v1/messages`,
    ...(before ? { before: `${before.url}/anthropic/v1/messages` } : {}),
    ...(ledgerOff ? { off: `${ledgerOff.url}/anthropic/v1/messages` } : {}),
  };
  const names = Object.keys(sides) as Side[];
  const samples = Object.fromEntries(
    names.map((side) => [
      side,
      { new: [] as number[], seen: [] as number[], head: [] as number[], first: [] as number[] },
    ]),
  ) as Record<Side, Record<Row, number[]>>;
  const tag = `cu${Date.now().toString(36)}`;
  let largest = 0;
  try {
    for (const dark of [false, true]) {
      const shots: string[] = [];
      for (let i = 0; i < LAST_TURN; i++) shots.push(await screenshot(1000 * (dark ? 2 : 1) + i, dark));
      const task = `${tag} ${dark ? "dark" : "light"}: book the cheapest flight`;
      const session = `${tag}-${dark ? "dark" : "light"}`;
      // The session up to turn 15, through the service only: its fits and memory are what a real one has.
      for (let turn = 1; turn < FIRST_TURN; turn++)
        for (const url of [sides.service!, ...(sides.before ? [sides.before] : []), ...(sides.off ? [sides.off] : [])])
          await timeTo(() => send(url, turnBody(task, shots, turn, false), session), false);
      for (let turn = FIRST_TURN; turn <= LAST_TURN; turn++) {
        const plain = turnBody(task, shots, turn, false);
        const streamed = turnBody(task, shots, turn, true);
        largest = Math.max(largest, plain.length);
        for (const side of [...names].sort(() => Math.random() - 0.5)) {
          const url = sides[side]!;
          samples[side].new.push(await timeTo(() => send(url, plain, session), false));
          samples[side].seen.push(
            await timeTo(
              () => send(url, plain, session),
              false,
              (ms) => samples[side].head.push(ms),
            ),
          );
          samples[side].first.push(await timeTo(() => send(url, streamed, session), true));
        }
      }
    }
  } finally {
    bare.stop();
    await stack.stop();
    await before?.stop();
    await ledgerOff?.stop();
  }
  const p50 = (side: Side, row: Row) => median(samples[side][row]);
  const label: Record<Row, string> = {
    new: "a turn with one new screenshot",
    seen: "a turn whose screenshots were all seen before",
    head: "the answer's headers of that turn (plain)",
    first: "the first streamed event of an all-seen turn",
  };
  const lines = [
    `### A computer-use session: one new ${WIDTH}x${HEIGHT} screenshot a turn`,
    "",
    `Turns ${FIRST_TURN}–${LAST_TURN} of a light and a dark session (${samples.direct.new.length} turns per row and side), bodies up to ${(largest / 1e6).toFixed(1)} MB; load average ${execSync("cat /proc/loadavg").toString().split(" ").slice(0, 3).join(" ")}.`,
    "",
    "| p50 per turn | direct ms | bare Worker ms | service ms | over direct | over the bare Worker |",
    "|---|---:|---:|---:|---:|---:|",
    ...ROWS.map(
      (row) =>
        `| ${label[row]} | ${ms(p50("direct", row))} | ${ms(p50("bare", row))} | ${ms(p50("service", row))} | +${ms(p50("service", row) - p50("direct", row))} | +${ms(p50("service", row) - p50("bare", row))} |`,
    ),
  ];
  if (before)
    lines.push(
      "",
      `The same turns through \`${beforeDir}\` ("before"), in the same run:`,
      "",
      "| p50 per turn | before ms | before over the bare Worker | service over the bare Worker |",
      "|---|---:|---:|---:|",
      ...ROWS.map(
        (row) =>
          `| ${label[row]} | ${ms(p50("before", row))} | +${ms(p50("before", row) - p50("bare", row))} | +${ms(p50("service", row) - p50("bare", row))} |`,
      ),
    );
  if (ledgerOff)
    lines.push(
      "",
      "The same turns through this checkout's service with the ledger off (`LEDGER_MODE=off`), in the same run:",
      "",
      "| p50 per turn | ledger off ms | ledger off over the bare Worker | service over the bare Worker |",
      "|---|---:|---:|---:|",
      ...ROWS.map(
        (row) =>
          `| ${label[row]} | ${ms(p50("off", row))} | +${ms(p50("off", row) - p50("bare", row))} | +${ms(p50("service", row) - p50("bare", row))} |`,
      ),
    );
  console.log(lines.join("\n"));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
