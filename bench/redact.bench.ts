/**
 * What taking the operator's key out of an answer costs (shared/proxy/redact.ts): answers streamed
 * through the scrubber's TransformStream and, side by side in the same run, through an identity
 * TransformStream (the floor of one more stream stage), in 64 KiB chunks: a 4.7 MB JSON answer of
 * text, the same answer written with `\u` escapes (which every chunk must then be decoded for), a
 * 4.7 MB base64 answer (every character one a key could hold), 4.7 MB of URLs with percent escapes
 * and 500 small server-sent events. Node's V8, the engine workerd and Deno run.
 * With REDACT_BASELINE=<git revision>, that revision's redact.ts runs interleaved beside this one
 * (a before/after in one run).
 * Run: npm run bench -- redact   (REDACT_BASELINE=main npm run bench -- redact)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { keyRedactor } from "../shared/proxy/redact";
import { median, ms } from "./stats";

type Stage = () => TransformStream<Uint8Array, Uint8Array>;

const KEY = `sk-ant-api03-${"Ab3_dE9-".repeat(11)}Zq7w`;
const encode = (text: string) => new TextEncoder().encode(text);

const words = "the quick brown fox jumps over the lazy dog ".repeat(107_000);
const answers: [string, Uint8Array[]][] = [
  ["JSON, 4.7 MB of text", chunks(encode(JSON.stringify({ content: [{ type: "text", text: words }] })), 65_536)],
  [
    "JSON, 4.7 MB with a \\u escape every 40 characters",
    chunks(encode(JSON.stringify({ text: words }).replaceAll("dog", "d\\u00f6g")), 65_536),
  ],
  ["JSON, 4.7 MB of base64", chunks(encode(JSON.stringify({ data: "QUJDRGVmZ2hpams".repeat(313_000) })), 65_536)],
  [
    "JSON, 4.7 MB of URLs with percent escapes",
    chunks(
      encode(JSON.stringify({ links: "https://example.com/a%20b?q=caf%C3%A9&x=%2Fdocs ".repeat(100_000) })),
      65_536,
    ),
  ],
  [
    "500 server-sent events of 150 bytes",
    Array.from({ length: 500 }, (_, i) =>
      encode(
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word ${i}"}}\n\n`,
      ),
    ),
  ],
];

function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

async function through(stage: Stage, parts: Uint8Array[]): Promise<number> {
  const start = performance.now();
  let index = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < parts.length) controller.enqueue(parts[index++]!);
      else controller.close();
    },
  });
  const reader = source.pipeThrough(stage()).getReader();
  while (!(await reader.read()).done);
  return performance.now() - start;
}

/** The scrubber of `revision`'s shared/proxy/redact.ts (a file that imports nothing), loaded beside this one. */
async function baselineStage(revision: string): Promise<Stage> {
  const source = execFileSync("git", ["show", `${revision}:shared/proxy/redact.ts`], { encoding: "utf8" });
  const file = join(mkdtempSync(join(tmpdir(), "redact-baseline-")), "redact.ts");
  writeFileSync(file, source);
  const baseline = (await import(pathToFileURL(file).href)) as typeof import("../shared/proxy/redact");
  const redactor = baseline.keyRedactor(KEY);
  return () => redactor.stream();
}

const revision = process.env.REDACT_BASELINE;
const redactor = keyRedactor(KEY);
const stages: [string, Stage][] = [
  ["identity stage", () => new TransformStream()],
  ...(revision ? ([[`scrubber at ${revision}`, await baselineStage(revision)]] as [string, Stage][]) : []),
  ["scrubber", () => redactor.stream()],
];
const rows: string[] = [];
for (const [name, parts] of answers) {
  const times: number[][] = stages.map(() => []);
  for (let run = 0; run < 15; run++) {
    // Interleaved, so a busy machine slows every stage alike.
    for (const [index, [, stage]] of stages.entries()) times[index]!.push(await through(stage, parts));
  }
  const bytes = parts.reduce((sum, part) => sum + part.byteLength, 0);
  const medians = times.map(median);
  const floor = medians[0]!;
  const cells = medians.slice(1).flatMap((value) => [ms(value), ms(value - floor)]);
  rows.push(`| ${name} | ${(bytes / 1e6).toFixed(2)} | ${ms(floor)} | ${cells.join(" | ")} |`);
}
const scrubbers = stages.slice(1).map(([name]) => name);
console.log(
  [
    "Median of 15 interleaved runs each; ms to pass the whole answer.",
    "",
    `| answer | MB | identity stage ms | ${scrubbers.map((name) => `${name} ms | added ms`).join(" | ")} |`,
    `|---|---:|---:|${scrubbers.map(() => "---:|---:|").join("")}`,
    ...rows,
  ].join("\n"),
);
