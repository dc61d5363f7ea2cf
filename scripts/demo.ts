/**
 * `npm run demo`: the point of the service in one command, with no keys and no network. Starts
 * the provider emulator and the service, replays the README's table live, and prints the provider
 * calls an agent would pay without the service and with it; then plays a short agent session with
 * screenshots through the provider proxy (against the LLM emulator) and prints what it was billed,
 * what it would have been billed as the agent sent it, and the difference. It ends with the
 * dashboard's URL and the totals it shows (from `/v1/stats`), and says how to keep it up:
 * `npm run demo -- --serve` keeps the service up (Ctrl-C stops it) so the dashboard can be opened.
 */
import { encodePng } from "../test/fixtures/images";
import { uiScreenshotPixels } from "../test/fixtures/ui-screenshots";
import { startLocalStack } from "./local-stack";

/** The screenshot session: turns, each after the first adding a retina screenshot as a tool result. */
const SESSION_TURNS = 6;

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function main() {
  console.log("Starting the provider emulator and the service (wrangler dev, local KV + Durable Objects)...");
  const stack = await startLocalStack();
  const run = Date.now().toString(36);
  const rows: [string, number, number, string][] = [];
  try {
    // Same query searched twice within the TTL.
    const twice = `weather in vegas ${run}`;
    const first = await post(stack.url, "/v1/web_search", { query: twice });
    const second = await post(stack.url, "/v1/web_search", { query: `  Weather  in Vegas ${run} ` });
    rows.push([
      "same query searched twice within the TTL",
      2,
      await stack.providerCalls("tavily", run),
      `${first.headers.get("x-cache")}, ${second.headers.get("x-cache")}`,
    ]);

    // Four identical searches at the same moment (the emulator answers in 500 ms, like a real API).
    const together = `parallel subagents research [slow:500] ${run}`;
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(stack.url, "/v1/web_search", { query: together })));
    const calls = await stack.providerCalls("tavily", `subagents research [slow:500] ${run}`);
    rows.push([
      "four identical searches at the same moment",
      4,
      calls,
      answers.map((a) => a.headers.get("x-cache")).join(", "),
    ]);

    const extract = await post(stack.url, "/v1/web_extract", { urls: [`https://example.com/docs/${run}`] });
    if (extract.status !== 404) {
      const again = await post(stack.url, "/v1/web_extract", { urls: [`https://example.com/docs/${run}`] });
      rows.push([
        "same URL extracted twice within the TTL",
        2,
        await stack.providerCalls("tavily", `docs/${run}`),
        `${extract.headers.get("x-cache")}, ${again.headers.get("x-cache")}`,
      ]);
    }
    const session = `demo-screenshots-${run}`;
    await screenshotSession(stack.url, session);
    const serve = process.argv.includes("--serve");
    printTables(rows, await ledgerTotals(stack.url, session), stack.url);
    if (serve) {
      console.log(`\nServing ${stack.url}/dashboard until Ctrl-C (the service stays up until then).`);
      await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
    } else console.log("\nTo keep the service up and open the dashboard: npm run demo -- --serve");
  } finally {
    await stack.stop();
  }
  if (rows.some(([, before, after]) => after >= before)) process.exitCode = 1;
}

/** The parts of `/v1/stats` the demo prints. */
interface Totals {
  saved_usd: number;
  totals: Record<
    "web_search" | "web_extract",
    { requests: number; provider_calls: number; hits: number; coalesced: number; saved_usd: number }
  > & {
    llm: {
      requests: number;
      output_tokens: number;
      images_fitted: number;
      images_retired: number;
      cost_usd: number;
      cost_without_cache_usd: number;
      saved_usd: number;
      /** Absent from a service before the as-sent estimate (then no LLM saving is claimed). */
      cost_as_sent_usd?: number;
      cache_saved_usd?: number;
    };
  };
}

/** One session of `/v1/stats/sessions`. */
interface SessionLine {
  session: string;
  requests: number;
  images_fitted: number;
  images_retired: number;
}

/**
 * An agent session through the provider proxy: a cached system prompt, then turns that each add a
 * 2560 × 1600 screenshot of an app as a tool result, as a computer-use agent does. The service fits
 * the screenshots and retires old ones on the way; the emulator bills the requests it received.
 */
async function screenshotSession(url: string, session: string): Promise<void> {
  const system = [
    {
      type: "text",
      text: `You operate a web app through screenshots. ${"Follow the checkout flow step by step. ".repeat(120)}`,
      cache_control: { type: "ephemeral" },
    },
  ];
  const messages: unknown[] = [{ role: "user", content: "Buy the blue mug in the demo shop." }];
  for (let turn = 0; turn < SESSION_TURNS; turn++) {
    const answer = await fetch(`${url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-demo", "x-session-id": session },
      body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 64, system, messages }),
    });
    if (answer.status !== 200) throw new Error(`the proxied session's turn ${turn + 1} answered ${answer.status}`);
    await answer.arrayBuffer();
    const spec = { width: 2560, height: 1600, theme: "light", scale: 2, layout: "app", seed: turn + 1 } as const;
    const png = await encodePng(uiScreenshotPixels(spec), spec.width, spec.height, 3);
    messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: `shot-${turn}`, name: "screenshot", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: `shot-${turn}`,
            content: [
              {
                type: "image",
                source: { type: "base64", media_type: "image/png", data: Buffer.from(png).toString("base64") },
              },
            ],
          },
        ],
      },
    );
  }
}

/** What the dashboard shows: `/v1/stats` for the last 24 hours, once the ledger has been written. */
async function ledgerTotals(url: string, session: string): Promise<{ stats: Totals; session?: SessionLine }> {
  const read = async () => (await (await fetch(`${url}/v1/stats?window=24h`)).json()) as Totals;
  let body = await read();
  // The ledger is written within a second of each response (waitUntil), an answer's usage as it ends.
  const done = (b: Totals) =>
    b.totals.web_search.requests >= 6 &&
    b.totals.web_extract.requests >= 2 &&
    b.totals.llm.requests >= SESSION_TURNS &&
    b.totals.llm.output_tokens > 0;
  for (let i = 0; i < 50 && !done(body); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    body = await read();
  }
  const sessions = (await (await fetch(`${url}/v1/stats/sessions?window=24h`)).json()) as { sessions?: SessionLine[] };
  return { stats: body, session: sessions.sessions?.find((s) => s.session === session) };
}

const usd = (n: number) => `${n < 0 ? "-" : ""}$${Math.abs(n).toFixed(4)}`;

function printTables(
  rows: [string, number, number, string][],
  { stats, session }: { stats: Totals; session?: SessionLine },
  url: string,
): void {
  console.log("\nProvider calls paid (emulated provider, counted at the provider):\n");
  // The same columns as the README's table.
  console.log("| case | provider calls without the service | with it | X-Cache |");
  console.log("|---|---|---|---|");
  for (const [name, before, after, cache] of rows) console.log(`| ${name} | ${before} | ${after} | ${cache} |`);
  console.log("\nEvery repeat above was answered from the shared cache or merged into the one call in flight.");
  const { web_search: search, web_extract: extract, llm } = stats.totals;
  // A service without the as-sent estimate claims no LLM saving (its llm.saved_usd is the provider's caching).
  const asSent = llm.cost_as_sent_usd;
  const cacheSaved = llm.cache_saved_usd ?? llm.cost_without_cache_usd - llm.cost_usd;
  if (session)
    console.log(
      `\nThe screenshot session (${session.session}): ${session.requests} requests through the proxy, ${session.images_fitted} images fitted, ${session.images_retired} retired on the way.`,
    );
  console.log(`\nDashboard: ${url}/dashboard (its totals for the last 24 hours, from /v1/stats):`);
  console.log(`  saved by this service: ${usd(stats.saved_usd)} (at the providers' public prices)`);
  console.log(
    `  web_search:  ${search.requests} requests, ${search.provider_calls} paid, ${search.hits + search.coalesced} avoided (${usd(search.saved_usd)})`,
  );
  console.log(
    `  web_extract: ${extract.requests} URLs, ${extract.provider_calls} paid, ${extract.hits + extract.coalesced} avoided (${usd(extract.saved_usd)})`,
  );
  console.log(
    `  LLM:         ${llm.requests} requests, billed ${usd(llm.cost_usd)}, as sent ${asSent === undefined ? "not estimated" : usd(asSent)}, saved ${asSent === undefined ? "not estimated" : usd(llm.saved_usd)}`,
  );
  console.log(
    `  the provider's prompt caching: ${usd(cacheSaved)} (the provider's, not this service's: the agent gets it with or without the service)`,
  );
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
