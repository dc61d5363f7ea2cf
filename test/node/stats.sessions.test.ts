/**
 * The ledger's sessions (docs/stats.md "Sessions"): what a proxied request's entry adds under its
 * session as it is gathered, the session's name, and the sessions answer's order and bounds.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import type { LedgerRow } from "../../shared/ports";
import {
  LEDGER_FAILED_NAME,
  LEDGER_OTHER_NAME,
  LEDGER_SESSION_CHARS,
  LedgerBuffer,
  sessionName,
} from "../../shared/stats/ledger";
import { sessionsReport } from "../../shared/stats/sessions.service";
import { ANSWER_SESSIONS } from "../../shared/stats/stats.schema";
import { statsReport } from "../../shared/stats/stats.service";

const HOUR = 3_600_000;
const now = Date.parse("2026-12-02T09:30:00Z");
const pricing = loadConfig({}).config.pricing;
const silent = { info() {}, warn() {}, error() {} };

/** The rows one flush of `record` calls hands the store. */
async function flushed(record: (ledger: LedgerBuffer) => void): Promise<LedgerRow[]> {
  const rows: LedgerRow[] = [];
  const ledger = new LedgerBuffer(
    {
      add: async (batch) => void rows.push(...batch),
      report: async () => null as never,
      sessions: async () => null as never,
    },
    silent,
  );
  record(ledger);
  await ledger.flush();
  return rows;
}

describe("sessionName", () => {
  it("is the caller's X-Session-Id trimmed and cut to 128 characters (never through a surrogate pair), else the derived one", () => {
    expect(sessionName("  checkout-flow-17 ", "derived")).toBe("checkout-flow-17");
    expect(sessionName(null, "derived")).toBe("derived");
    expect(sessionName("   ", "derived")).toBe("derived");
    expect(sessionName("x".repeat(300), "derived")).toBe("x".repeat(LEDGER_SESSION_CHARS));
    const astral = `${"x".repeat(LEDGER_SESSION_CHARS - 1)}😀tail`;
    expect(sessionName(astral, "derived")).toBe("x".repeat(LEDGER_SESSION_CHARS - 1));
  });
});

describe("the ledger's session rows", () => {
  it("counts an entry again under its session, with the first and the last time, and leaves /v1/stats as it was", async () => {
    const rows = await flushed((ledger) => {
      const entry = { tool: "llm" as const, provider: "anthropic", model: "claude-sonnet-4-5", session: "s-1" };
      ledger.record({ ...entry, counts: { requests: 1, input_tokens: 100 }, at: now });
      ledger.record({ ...entry, counts: { requests: 1, output_tokens: 7 }, at: now - 60_000 });
      ledger.record({ ...entry, counts: { requests: 1 }, at: now + 60_000 });
      // A web tool's entry has no session rows whatever it carries.
      ledger.record({ tool: "web_search", provider: "tavily", session: "s-1", counts: { requests: 1 }, at: now });
    });
    const session = Object.fromEntries(rows.filter((r) => r.session === "s-1").map((r) => [r.counter, r.value]));
    expect(session).toEqual({
      requests: 3,
      input_tokens: 100,
      output_tokens: 7,
      first_at: now - 60_000,
      last_at: now + 60_000,
    });
    expect(rows.filter((r) => r.session !== undefined && r.tool !== "llm")).toEqual([]);
    const stats = statsReport(rows, "24h", now, pricing);
    expect(stats.totals.llm).toMatchObject({ requests: 3, input_tokens: 100, output_tokens: 7 });
    expect(stats.totals.web_search.requests).toBe(1);
  });
});

describe("a refused request's session", () => {
  it(`is counted under "${LEDGER_FAILED_NAME}" unless an answer confirmed it, as a model name is`, async () => {
    const rows = await flushed((ledger) => {
      const entry = { tool: "llm" as const, provider: "anthropic", model: "claude-sonnet-4-5" };
      // A flood of refused requests naming a new session each takes no session's place.
      for (let i = 0; i < 5; i++)
        ledger.record({
          ...entry,
          session: `junk-${i}`,
          unconfirmed: true,
          counts: { requests: 1, errors: 1 },
          at: now,
        });
      ledger.record({ ...entry, session: "real", counts: { requests: 1 }, at: now });
      ledger.record({ ...entry, session: "real", unconfirmed: true, counts: { requests: 1, errors: 1 }, at: now });
    });
    const requests = (session: string) =>
      rows.find((r) => r.session === session && r.counter === "requests")?.value ?? 0;
    expect([requests("real"), requests(LEDGER_FAILED_NAME), requests("junk-0")]).toEqual([2, 5, 0]);
  });
});

describe("the sessions answer", () => {
  const hour = Math.floor(now / HOUR) * HOUR;
  const row = (session: string, counter: string, value: number, model = "claude-sonnet-4-5"): LedgerRow => ({
    hour,
    tool: "llm",
    provider: "anthropic",
    model,
    counter,
    value,
    session,
  });

  it("lists the most saved first, a session without an as-sent count claiming nothing (as sent = billed), its model the busiest", () => {
    const rows = [
      row("cheap", "requests", 1),
      row("cheap", "input_tokens", 1_000_000),
      row("cheap", "as_sent_input_tokens", 1_000_000), // as sent = billed: 0 saved
      row("saver", "requests", 2),
      row("saver", "input_tokens", 1_000_000),
      row("saver", "as_sent_input_tokens", 2_000_000), // $3 saved at $3 per million
      row("saver", "requests", 1, "claude-haiku-4-5"),
      row("costly", "requests", 1),
      row("costly", "input_tokens", 2_000_000),
      row("costly", "as_sent_input_tokens", 1_000_000), // a change that cost $3
      row("old", "requests", 1),
      row("old", "input_tokens", 1_000_000),
    ];
    const answer = sessionsReport(rows, "1h", now, pricing).sessions;
    expect(answer.map((s) => [s.session, s.saved_usd])).toEqual([
      ["saver", 3],
      ["cheap", 0], // a tie on saved and billed: by name
      ["old", 0],
      ["costly", -3],
    ]);
    expect(answer.find((s) => s.session === "old")).toMatchObject({ cost_usd: 3, cost_as_sent_usd: 3 });
    expect(answer[0]).toMatchObject({ model: "claude-sonnet-4-5", requests: 3, cost_as_sent_usd: 6 });
  });

  it(`answers at most ${ANSWER_SESSIONS}, the least saved summed into "${LEDGER_OTHER_NAME}" with the stored one, last`, () => {
    const rows = Array.from({ length: ANSWER_SESSIONS + 10 }, (_, i) =>
      row(`s-${String(i).padStart(3, "0")}`, "requests", 1),
    );
    rows.push(row(LEDGER_OTHER_NAME, "requests", 5));
    const answer = sessionsReport(rows, "1h", now, pricing).sessions;
    expect(answer).toHaveLength(ANSWER_SESSIONS);
    expect(answer.at(-1)).toMatchObject({ session: LEDGER_OTHER_NAME, requests: 5 + 11 });
    expect(answer.reduce((n, s) => n + s.requests, 0)).toBe(ANSWER_SESSIONS + 15);
  });
});
