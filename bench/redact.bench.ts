/**
 * What taking the operator's key out of an answer costs (shared/proxy/redact.ts): answers streamed
 * through the scrubber's TransformStream and, side by side in the same run, through an identity
 * TransformStream (the floor of one more stream stage), in 64 KiB chunks: a 4.7 MB JSON answer of
 * text, the same answer written with `\u` escapes (which every chunk must then be decoded for), a
 * 4.7 MB base64 answer (every character one a key could hold) and 500 small server-sent events.
 * Node's V8, the engine workerd and Deno run.
 * Run: npm run bench -- redact
 */
import { keyRedactor } from "../shared/proxy/redact";
import { median, ms } from "./stats";

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

async function through(stage: () => TransformStream<Uint8Array, Uint8Array>, parts: Uint8Array[]): Promise<number> {
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

const redactor = keyRedactor(KEY);
const rows: string[] = [];
for (const [name, parts] of answers) {
  const floor: number[] = [];
  const scrubbed: number[] = [];
  for (let run = 0; run < 15; run++) {
    // Interleaved, so a busy machine slows both alike.
    floor.push(await through(() => new TransformStream(), parts));
    scrubbed.push(await through(() => redactor.stream(), parts));
  }
  const bytes = parts.reduce((sum, part) => sum + part.byteLength, 0);
  rows.push(
    `| ${name} | ${(bytes / 1e6).toFixed(2)} | ${ms(median(floor))} | ${ms(median(scrubbed))} | ${ms(median(scrubbed) - median(floor))} |`,
  );
}
console.log(
  [
    "Median of 15 interleaved runs each; ms to pass the whole answer.",
    "",
    "| answer | MB | identity stage ms | scrubber ms | added ms |",
    "|---|---:|---:|---:|---:|",
    ...rows,
  ].join("\n"),
);
