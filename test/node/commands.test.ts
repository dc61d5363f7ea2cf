/**
 * The commands a newcomer runs, run as they would run them: `npm run demo` prints the figures of
 * the README's table live, and `npm run replay -- ... --json` prints the one object the issue specifies.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

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
    expect(output).toContain("money saved: $0.0336");
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
