/**
 * /mcp under `wrangler dev`: the latency of a web_search cache hit through the official MCP SDK
 * (a fresh McpServer and transport per request) next to the same hit on the HTTP route and a bare
 * Worker returning the same JSON-RPC answer, interleaved in one run. The budget (issue #11): an
 * MCP cache hit within 1.5x the bare route.
 * Run: npm run bench -- mcp. With MCP_BENCH_BEFORE=<dir of another checkout> (its node_modules
 * installed or linked), that checkout's /mcp is measured in the same rounds, e.g. the hand-written
 * endpoint the SDK replaced.
 */
import { type LocalStack, startLocalStack } from "../scripts/local-stack";
import { startBare } from "./bare-worker/start";
import { median, ms, percentile, timed } from "./stats";

const ROUNDS = 400;
const WARM_UP = 30;

const mcpCall = (stack: LocalStack, query: string) => () =>
  fetch(`${stack.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      "mcp-session-id": "bench-session",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "web_search", arguments: { query } },
    }),
  });

const httpCall = (stack: LocalStack, query: string) => () =>
  fetch(`${stack.url}/v1/web_search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });

async function main() {
  const stack = await startLocalStack();
  const beforeDir = process.env.MCP_BENCH_BEFORE;
  const before = beforeDir ? await startLocalStack({ cwd: beforeDir }) : null;
  const query = `bench mcp ${Date.now().toString(36)}`;
  try {
    await httpCall(stack, query)();
    if (before) await httpCall(before, query)();
    const answer = await (await mcpCall(stack, query)()).text();
    if (!answer.includes('\\"cache\\":\\"hit\\"'))
      throw new Error(`expected an MCP cache hit: ${answer.slice(0, 200)}`);
    const bare = await startBare(answer);
    type Side = [string, () => Promise<Response>];
    const beforeSides: Side[] = before
      ? [
          ["POST /mcp tools/call web_search (hit), before", mcpCall(before, query)],
          ["POST /v1/web_search (hit), before", httpCall(before, query)],
        ]
      : [];
    const sides: Side[] = [
      ["POST /mcp tools/call web_search (hit), SDK", mcpCall(stack, query)],
      ["POST /v1/web_search (hit)", httpCall(stack, query)],
      ...beforeSides,
      ["bare Worker, same JSON-RPC answer", () => fetch(bare.url, { method: "POST", body: "{}" })],
    ];
    const samples = sides.map(() => [] as number[]);
    try {
      for (let round = 0; round < WARM_UP + ROUNDS; round++) {
        // A different order each round, so no side always follows another's GC or log flush.
        const order = sides.map((_, i) => i).sort(() => Math.random() - 0.5);
        for (const i of order) {
          const { ms: took } = await timed(sides[i]![1]);
          if (round >= WARM_UP) samples[i]!.push(took);
        }
      }
    } finally {
      bare.stop();
    }
    const bareSamples = samples[samples.length - 1]!;
    const lines = [
      "### web_search cache hit: MCP (SDK) vs the HTTP route vs a bare Worker",
      "",
      `${ROUNDS} sequential requests per side, interleaved in a random order per round, after ${WARM_UP} warm-up rounds.`,
      "",
    ];
    lines.push("| request | p50 ms | p99 ms | p50 / bare |", "|---|---|---|---|");
    for (const [i, [name]] of sides.entries()) {
      const values = samples[i]!;
      lines.push(
        `| ${name} | ${ms(median(values))} | ${ms(percentile(values, 99))} | ${(median(values) / median(bareSamples)).toFixed(2)}x |`,
      );
    }
    console.log(lines.join("\n"));
  } finally {
    await before?.stop();
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
