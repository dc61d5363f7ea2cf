/**
 * The commands a newcomer runs, run as they would run them: `npm run demo` prints the figures of
 * the README's table live and a screenshot session's LLM line, and keeps the service up with
 * `-- --serve`; and `npm run replay -- ... --json` prints the one object the issue specifies.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";

const run = (args: string[], timeout = 180_000) =>
  execFileSync("npm", args, {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    timeout,
    stdio: ["ignore", "pipe", "pipe"],
  });

describe("npm run demo", () => {
  it("shows 2 → 1 and 4 → 1 provider calls (and 2 → 1 for extract), measured live", () => {
    const output = run(["run", "-s", "demo"]);
    expect(output).toMatch(/\| same query searched twice within the TTL \| 2 \| 1 \|/);
    expect(output).toMatch(/\| four identical searches at the same moment \| 4 \| 1 \|/);
    expect(output).toMatch(/\| same URL extracted twice within the TTL \| 2 \| 1 \| HIT=0,MISS=1, HIT=1,MISS=0 \|/);
    // The columns a reader of the README expects.
    const readmeHeader = readFileSync("README.md", "utf8")
      .split("\n")
      .find((line) => line.startsWith("| case |"));
    expect(output.split("\n")).toContain(readmeHeader);
    // It ends with the dashboard's URL and the totals it shows, from the ledger.
    expect(output).toMatch(/Dashboard: http:\/\/127\.0\.0\.1:\d+\/dashboard/);
    expect(output).toContain("web_search:  6 requests, 2 paid, 4 avoided ($0.0320)");
    expect(output).toContain("web_extract: 2 URLs, 1 paid, 1 avoided ($0.0016)");
    // The screenshot session through the proxy: its line, and the LLM's billed, as sent and saved.
    expect(output).toMatch(
      /The screenshot session \(demo-screenshots-\w+\): 6 requests through the proxy, [1-9]\d* images fitted, \d+ retired on the way\./,
    );
    const llm = output.match(
      / {2}LLM: +6 requests, billed \$(\d+\.\d{4}), as sent (\$\d+\.\d{4}|not estimated), saved (-?\$\d+\.\d{4}|not estimated)\n/,
    );
    expect(llm, output).not.toBeNull();
    expect(Number(llm![1])).toBeGreaterThan(0);
    // A service without the as-sent estimate says so rather than claim a figure.
    if (llm![2] !== "not estimated")
      expect(Number(llm![3]!.replace("$", ""))).toBeCloseTo(Number(llm![2]!.replace("$", "")) - Number(llm![1]), 3);
    expect(output).toMatch(/ {2}the provider's prompt caching: \$\d+\.\d{4} \(the provider's, not this service's/);
    expect(output).toMatch(/ {2}saved by this service: \$\d+\.\d{4} /);
    // Its last line says how to keep the dashboard up.
    expect(output.trimEnd().split("\n").at(-1)).toBe(
      "To keep the service up and open the dashboard: npm run demo -- --serve",
    );
  }, 180_000);

  it("with -- --serve keeps the service up, its dashboard and sessions answering, until Ctrl-C", async () => {
    const demo = spawn("npm", ["run", "-s", "demo", "--", "--serve"], {
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    let serving = "";
    const exited = new Promise<void>((resolve) => demo.once("exit", () => resolve()));
    try {
      serving = await new Promise<string>((resolve, reject) => {
        demo.stdout.on("data", (chunk) => {
          output += String(chunk);
          const found = output.match(/Serving (http:\/\/127\.0\.0\.1:\d+)\/dashboard until Ctrl-C/);
          if (found) resolve(found[1]!);
        });
        void exited.then(() => reject(new Error(`the demo ended before serving:\n${output}`)));
      });
      expect(output.trimEnd().split("\n").at(-1)).toMatch(/^Serving http:\/\/127\.0\.0\.1:\d+\/dashboard until Ctrl-C/);
      // Up after its last line: the page, and the session it played.
      expect((await fetch(`${serving}/dashboard`)).status).toBe(200);
      const sessions = (await (await fetch(`${serving}/v1/stats/sessions?window=24h`)).json()) as {
        sessions: { session: string; requests: number }[];
      };
      expect(sessions.sessions.find((s) => s.session.startsWith("demo-screenshots-"))?.requests).toBe(6);
    } finally {
      // Ctrl-C: the signal to the demo's own process group.
      if (demo.exitCode === null && demo.pid) process.kill(-demo.pid, "SIGINT");
    }
    await exited;
    // Ctrl-C stopped the service too.
    await vi.waitFor(() => expect(fetch(`${serving}/healthz`)).rejects.toThrow(), { timeout: 20_000, interval: 200 });
  }, 180_000);
});

describe("npm run replay", () => {
  it("prints keep3, batched, raised, context_editing, claude_code and cost with the specified fields as one JSON object", () => {
    const report = JSON.parse(run(["run", "-s", "replay", "--", "--turns", "40", "--images", "12", "--json"], 60_000));
    expect(report.model.kind).toBe("anthropic");
    for (const policy of [
      "keep3",
      "batched",
      "raised",
      "context_editing",
      "context_editing_clear_at_least",
      "claude_code",
      "cost",
      "cost_known",
    ]) {
      for (const field of [
        "cache_write_tokens",
        "cache_read_tokens",
        "eviction_write_share",
        "worst_request_write_tokens",
        "cost",
      ]) {
        expect(typeof report[policy][field], `${policy}.${field}`).toBe("number");
      }
    }
    // The light session: batching causes no eviction writes, keep-3 spends a large share on them.
    expect(report.batched.eviction_write_share).toBe(0);
    expect(report.keep3.eviction_write_share).toBeGreaterThan(0.3);
    expect(report.cost.eviction_write_share).toBe(0);
  });

  it("switches the cache model with --cache ideal|anthropic|openai|openai-breakpoints", () => {
    const costs = ["ideal", "anthropic", "openai", "openai-breakpoints"].map((cache) => {
      const report = JSON.parse(
        run(["run", "-s", "replay", "--", "--turns", "40", "--images", "12", "--cache", cache, "--json"], 60_000),
      );
      expect(report.model.kind).toBe(cache);
      return report.keep3.cost;
    });
    expect(new Set(costs).size).toBe(4);
  });

  it("--random N says over N random sessions how often cost loses to hermes, and why (here told a 90-request budget)", () => {
    const report = JSON.parse(
      run(["run", "-s", "replay", "--", "--random", "60", "--seed", "1", "--requests-left", "90", "--json"], 60_000),
    );
    expect(report.sessions).toBe(60);
    expect(typeof report.mean_excess).toBe("number");
    expect(report.losses.length).toBeGreaterThan(0); // an over-estimated budget loses some of these
    for (const loss of report.losses) expect(loss.why).toMatch(/^cost /);
    const table = run(["run", "-s", "replay", "--", "--random", "60", "--seed", "1"], 60_000);
    expect(table).toMatch(/cost \(told nothing\) over 60 random sessions:\n- against hermes 20\/8\/3: dearer in \d+/);
    expect(table).toMatch(/- against the cheapest rival of each session: over it \+ 2 % in \d+/);
  });

  it("--validate reproduces the hand-made session's logged usage exactly", () => {
    const report = JSON.parse(
      run(
        ["run", "-s", "replay", "--", "--session", "test/fixtures/replay-validate.jsonl", "--validate", "--json"],
        60_000,
      ),
    );
    expect(report.rows).toHaveLength(4);
    expect(report.total_error_tokens).toBe(0);
  });
});
