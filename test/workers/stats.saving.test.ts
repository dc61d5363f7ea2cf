/**
 * The service's own saving (docs/stats.md): the ledger's as-sent tokens, `/v1/stats`'s
 * `cost_as_sent_usd` and `saved_usd`, and `X-Edge-Saved-Usd`, through the real Workers entry, KV
 * (the session's record) and the LedgerDO, against the same session sent directly to the
 * emulator; and the image counters that count each thing once.
 */
import { describe, expect, it } from "vitest";
import { modelRules, usageCost } from "../../shared/llm/models.table";
import { toBase64 } from "../../shared/media/data-url";
import { encodePng, screenshotPixels } from "../fixtures/images";
import { agentKeyHeader, agentPath, agentRequest, type AgentSession } from "../support/agent-sessions";
import { call, EMULATOR, ledgerCountsAfter, uniqueToken } from "./helpers";

interface Usage {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

const provider = (session: AgentSession) => (session.format === "anthropic" ? "anthropic" : "openai");

/** Plays a session directly to the emulator; the cost the provider billed for it. */
async function direct(session: AgentSession): Promise<number> {
  const prices = modelRules(provider(session), session.model).prices;
  let usd = 0;
  for (let turn = 1; turn <= session.turns; turn++) {
    const response = await fetch(`${EMULATOR}/llm/${provider(session)}${agentPath(session)}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...agentKeyHeader(session, `direct-${session.tag}`) },
      body: JSON.stringify(agentRequest(session, turn)),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { usage: any };
    const u = body.usage;
    const usage: Usage =
      session.format === "anthropic"
        ? {
            input: u.input_tokens,
            cacheWrite5m: u.cache_creation.ephemeral_5m_input_tokens,
            cacheWrite1h: u.cache_creation.ephemeral_1h_input_tokens,
            cacheRead: u.cache_read_input_tokens,
            output: u.output_tokens,
          }
        : {
            input: u.prompt_tokens - u.prompt_tokens_details.cached_tokens,
            cacheWrite5m: 0,
            cacheWrite1h: 0,
            cacheRead: u.prompt_tokens_details.cached_tokens,
            output: u.completion_tokens,
          };
    usd += usageCost(prices, usage).costUsd;
  }
  return usd;
}

/** Plays a session through the service; each answer's X-Edge headers. */
async function proxied(session: AgentSession, vars?: Record<string, unknown>): Promise<Headers[]> {
  const headers: Headers[] = [];
  for (let turn = 1; turn <= session.turns; turn++) {
    const response = await call(`/${provider(session)}${agentPath(session)}`, {
      body: agentRequest(session, turn),
      headers: agentKeyHeader(session, `proxy-${session.tag}`),
      ...(vars ? { vars } : {}),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    await response.text();
    headers.push(response.headers);
  }
  return headers;
}

/** The ledger's counts for `model` once `requests` answers are stored with their usage. */
const ledgerOf = (model: string, requests: number) =>
  ledgerCountsAfter(model, requests, (counts) => {
    const asSent = Object.entries(counts).filter(([name]) => name.startsWith("as_sent_"));
    expect(asSent.reduce((sum, [, value]) => sum + value, 0)).toBeGreaterThan(0);
  });

/** What the ledger's counts cost as billed and as sent, at the model's prices. */
function ledgerMoney(session: AgentSession, counts: Record<string, number>): { billed: number; asSent: number } {
  const prices = modelRules(provider(session), session.model).prices;
  const n = (name: string) => counts[name] ?? 0;
  const output = n("output_tokens");
  return {
    billed: usageCost(prices, {
      input: n("input_tokens"),
      cacheWrite5m: n("cache_write_tokens"),
      cacheWrite1h: 0,
      cacheRead: n("cache_read_tokens"),
      output,
    }).costUsd,
    asSent: usageCost(prices, {
      input: n("as_sent_input_tokens"),
      cacheWrite5m: n("as_sent_cache_write_5m_tokens"),
      cacheWrite1h: n("as_sent_cache_write_1h_tokens"),
      cacheRead: n("as_sent_cache_read_tokens"),
      output,
    }).costUsd,
  };
}

const shots = async (count: number, width: number, height: number) => {
  const out: string[] = [];
  for (let s = 0; s < count; s++)
    out.push(toBase64(await encodePng(screenshotPixels(width, height, 40 + s), width, height, 3)));
  return out;
};

describe("the service's own saving", () => {
  it("a text-only session claims none: as sent is the bill, token for token, and every header says 0", async () => {
    const tag = uniqueToken();
    const session: AgentSession = { format: "anthropic", model: `claude-sonnet-4-5-${tag}`, tag, turns: 5, shots: [] };
    const headers = await proxied(session);
    for (const h of headers) expect(h.get("x-edge-saved-usd")).toBe("0.000000");
    const counts = await ledgerOf(session.model, 5);
    expect([
      counts.as_sent_input_tokens ?? 0,
      (counts.as_sent_cache_write_5m_tokens ?? 0) + (counts.as_sent_cache_write_1h_tokens ?? 0),
      counts.as_sent_cache_read_tokens ?? 0,
    ]).toEqual([counts.input_tokens ?? 0, counts.cache_write_tokens ?? 0, counts.cache_read_tokens ?? 0]);
    const stats = (await (await call("/v1/stats?window=24h")).json()) as any;
    const row = stats.by_model.llm[session.model];
    expect(row.saved_usd).toBe(0);
    expect(row.cost_as_sent_usd).toBe(row.cost_usd);
    expect(row.cache_saved_usd).toBeGreaterThan(0); // the provider's caching, apart
  });

  it("a screenshot session whose images are retired: as sent within 3 % of the same session sent directly", async () => {
    const tag = uniqueToken();
    const session: AgentSession = {
      format: "anthropic",
      model: `claude-sonnet-4-5-${tag}`,
      tag,
      turns: 30,
      shots: await shots(4, 1200, 900),
    };
    const directUsd = await direct(session);
    // Hermes's 20/8/3 retires deterministically from the 21st screenshot on.
    const headers = await proxied(session, { PROXY_STRATEGY: "hermes" });
    const counts = await ledgerOf(session.model, session.turns);
    const money = ledgerMoney(session, counts);
    expect(Math.abs(money.asSent - directUsd) / directUsd).toBeLessThan(0.03);
    // The retirements changed the bill: the saving is what the ledger says, signed (here Hermes's
    // collapse at the 21st screenshot costs more than its 10 remaining turns save: a loss, shown).
    expect(Math.abs(money.asSent - money.billed)).toBeGreaterThan(0);
    const header = headers.map((h) => h.get("x-edge-saved-usd")!);
    for (const value of header) expect(value).toMatch(/^-?\d+\.\d{6}$/);
    expect(header.slice(0, 20).every((value) => value === "0.000000")).toBe(true);
    // The headers' pre-send estimates tell the same story as the ledger's calibrated figure.
    const headerSum = header.reduce((sum, value) => sum + Number(value), 0);
    const saved = money.asSent - money.billed;
    expect(Math.sign(headerSum)).toBe(Math.sign(saved));
    expect(Math.abs(headerSum - saved)).toBeLessThan(0.25 * Math.abs(saved));
    // Each retirement counted once: the sum is the blocks the last request still retires.
    expect(counts.images_retired).toBe(Number(headers.at(-1)!.get("x-edge-retired")));
    const stats = (await (await call("/v1/stats?window=24h")).json()) as any;
    const row = stats.by_model.llm[session.model];
    expect(row.saved_usd).toBeCloseTo(row.cost_as_sent_usd - row.cost_usd, 9);
    expect(row.cost_as_sent_usd).toBeCloseTo(money.asSent, 6);
  });

  it("counts a fitted image once, and every block it is sent in", async () => {
    const tag = uniqueToken();
    // Over the long edge (1568 px): every screenshot is fitted, each re-sent in every later request.
    const session: AgentSession = {
      format: "anthropic",
      model: `claude-sonnet-4-5-${tag}`,
      tag,
      turns: 3,
      shots: await shots(3, 1800, 1000),
    };
    const headers = await proxied(session);
    expect(headers.map((h) => h.get("x-edge-fitted"))).toEqual(["1", "2", "3"]);
    const counts = await ledgerOf(session.model, 3);
    expect(counts.images_fitted).toBe(3);
    expect(counts.image_blocks_fitted).toBe(6);
  });
});
