/**
 * `GET /v1/stats/sessions` in workerd (docs/stats.md "Sessions"): proxied requests reach the
 * LedgerDO under their session (the caller's X-Session-Id, cut to 128 characters, or the derived
 * X-Edge-Session), through the real Workers entry and its waitUntil flush.
 */
import { describe, expect, it, vi } from "vitest";
import { LEDGER_SESSION_CHARS } from "../../shared/stats/ledger";
import { call, callJson, expectErrorShape, uniqueToken } from "./helpers";

/** A message to the proxied Anthropic Messages API; the answer. */
async function send(headers: Record<string, string>, text = "hi"): Promise<Response> {
  const response = await call("/anthropic/v1/messages", {
    body: { model: "claude-sonnet-4-5", max_tokens: 8, messages: [{ role: "user", content: text }] },
    headers: { "x-api-key": `k-${uniqueToken()}`, ...headers },
  });
  await response.clone().text();
  return response;
}

// 24 h, not 1h (the clock hour so far): a clock hour turning mid-test would split a session's counts.
const sessions = async (query = "window=24h") => {
  const res = await callJson(`/v1/stats/sessions?${query}`);
  expect(res.status).toBe(200);
  return res.body.sessions as any[];
};

describe("GET /v1/stats/sessions", () => {
  it("answers each session by its X-Session-Id, or its X-Edge-Session without one, with what it counted", async () => {
    const named = `checkout-flow-${uniqueToken()}`;
    for (let i = 0; i < 3; i++) expect((await send({ "x-session-id": named })).status).toBe(200);
    const derived = await send({}, `a conversation of its own ${uniqueToken()}`);
    const edge = derived.headers.get("x-edge-session")!;
    expect(edge).toMatch(/^[0-9a-f]{32}$/);
    // A session id past 128 characters is kept cut (the caller's text, as it came).
    const long = `${uniqueToken()}-${"s".repeat(300)}`;
    expect((await send({ "x-session-id": long })).status).toBe(200);
    let answer: any[] = [];
    await vi.waitFor(
      async () => {
        await call("/healthz"); // a later request's flush writes the earlier ones' counts
        answer = await sessions();
        expect(answer.find((s) => s.session === named)?.requests).toBe(3);
        expect(answer.find((s) => s.session === edge)?.requests).toBe(1);
        expect(answer.find((s) => s.session === long.slice(0, LEDGER_SESSION_CHARS))?.requests).toBe(1);
      },
      { timeout: 5000, interval: 100 },
    );
    const row = answer.find((s) => s.session === named);
    expect(Object.keys(row)).toEqual([
      "session",
      "provider",
      "model",
      "requests",
      "first_at",
      "last_at",
      "input_tokens",
      "cache_write_tokens",
      "cache_read_tokens",
      "output_tokens",
      "images_fitted",
      "images_retired",
      "cost_usd",
      "cost_as_sent_usd",
      "saved_usd",
    ]);
    expect(row).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(row.input_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.cost_usd).toBeGreaterThan(0);
    expect(Date.parse(row.first_at)).toBeLessThanOrEqual(Date.parse(row.last_at));
    expect(Date.now() - Date.parse(row.last_at)).toBeLessThan(60_000);
    expect(answer.some((s) => s.session.length > LEDGER_SESSION_CHARS)).toBe(false);
  });

  it("refuses a query parameter it does not take, like /v1/stats, and asks for a token where /v1/stats does", async () => {
    const res = await callJson("/v1/stats/sessions?windows=7d");
    expect(res.status).toBe(400);
    expect(expectErrorShape(res.body).message).toBe(
      'GET /v1/stats/sessions takes one query parameter, window; "windows" is not it.',
    );
    const bad = await callJson("/v1/stats/sessions?window=2h");
    expect(bad.status).toBe(400);
    const locked = await callJson("/v1/stats/sessions", {
      vars: { API_TOKENS: "sessions-token-1", SECURITY_ALLOW_ANONYMOUS: "false" },
    });
    expect(locked.status).toBe(401);
  });
});
