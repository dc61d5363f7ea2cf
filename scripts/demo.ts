/**
 * `npm run demo`: the point of the service in one command, with no keys and no network. Starts
 * the provider emulator and the service, replays the README's table live, and prints the provider
 * calls an agent would pay without the service and with it.
 */
import { startLocalStack } from "./local-stack";

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

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
    rows.push(["same query searched twice within the TTL", 2, await stack.providerCalls("tavily", run), `${first.headers.get("x-cache")}, ${second.headers.get("x-cache")}`]);

    // Four identical searches at the same moment (the emulator answers in 500 ms, like a real API).
    const together = `parallel subagents research [slow:500] ${run}`;
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(stack.url, "/v1/web_search", { query: together })));
    const calls = await stack.providerCalls("tavily", `subagents research [slow:500] ${run}`);
    rows.push(["four identical searches at the same moment", 4, calls, answers.map((a) => a.headers.get("x-cache")).join(", ")]);

    const extract = await post(stack.url, "/v1/web_extract", { urls: [`https://example.com/docs/${run}`] });
    if (extract.status !== 404) {
      const again = await post(stack.url, "/v1/web_extract", { urls: [`https://example.com/docs/${run}`] });
      rows.push(["same URL extracted twice within the TTL", 2, await stack.providerCalls("tavily", `docs/${run}`), `${extract.headers.get("x-cache")}, ${again.headers.get("x-cache")}`]);
    }
  } finally {
    await stack.stop();
  }

  console.log("\nProvider calls paid (emulated provider, counted at the provider):\n");
  // The same columns as the README's table.
  console.log("| case | provider calls without the service | with it | X-Cache |");
  console.log("|---|---|---|---|");
  for (const [name, before, after, cache] of rows) console.log(`| ${name} | ${before} | ${after} | ${cache} |`);
  console.log("\nEvery repeat above was answered from the shared cache or merged into the one call in flight.");
  if (rows.some(([, before, after]) => after >= before)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
