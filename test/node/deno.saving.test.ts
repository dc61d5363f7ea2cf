/**
 * The service's own saving on the Deno entry, whose session record (eviction memory and as-sent
 * shadow) lives in Deno KV: a screenshot session whose images Hermes's 20/8/3 retires, played
 * through `deno run` and straight to the emulator; the ledger's as-sent cost within 3 % of the
 * direct bill, each retirement and each fit counted once, and a text-only session at no saving.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelRules, usageCost } from "../../shared/llm/models.table";
import { encodePng, screenshotPixels } from "../fixtures/images";
import { agentKeyHeader, agentPath, agentRequest, type AgentSession } from "../support/agent-sessions";
import { type DenoOnEmulator, type DenoService, startDenoOnEmulator } from "../support/deno-service";

let emulator: DenoOnEmulator["emulator"];
let deno: DenoService;
let stack: DenoOnEmulator;

beforeAll(async () => {
  stack = await startDenoOnEmulator({
    SECURITY_ALLOW_ANONYMOUS: "true",
    PROXY_STRATEGY: "hermes",
    LEDGER_FLUSH_MS: "0",
  });
  ({ emulator, deno } = stack);
}, 90_000);

afterAll(() => stack?.stop());

/** Plays the session to `base`; the USD billed and each answer's headers. */
async function play(session: AgentSession, base: string, key: string): Promise<{ usd: number; headers: Headers[] }> {
  const prices = modelRules("anthropic", session.model).prices;
  let usd = 0;
  const headers: Headers[] = [];
  for (let turn = 1; turn <= session.turns; turn++) {
    const response = await fetch(`${base}${agentPath(session)}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...agentKeyHeader(session, key) },
      body: JSON.stringify(agentRequest(session, turn)),
    });
    const body = (await response.json()) as any;
    expect(response.status, JSON.stringify(body).slice(0, 200)).toBe(200);
    const u = body.usage;
    usd += usageCost(prices, {
      input: u.input_tokens,
      cacheWrite5m: u.cache_creation.ephemeral_5m_input_tokens,
      cacheWrite1h: u.cache_creation.ephemeral_1h_input_tokens,
      cacheRead: u.cache_read_input_tokens,
      output: u.output_tokens,
    }).costUsd;
    headers.push(response.headers);
  }
  return { usd, headers };
}

/** The model's row of `/v1/stats` once `requests` of it are written. */
async function statsRow(model: string, requests: number): Promise<any> {
  for (let tries = 0; tries < 100; tries++) {
    const stats = (await (await fetch(`${deno.url}/v1/stats?window=24h`)).json()) as any;
    const row = stats.by_model.llm[model];
    if (row?.requests === requests && row.cost_as_sent_usd > 0) return row;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no stats row of ${requests} requests for ${model}`);
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

describe("the service's own saving on Deno (Deno KV)", () => {
  it("a retired screenshot session: as sent within 3 % of the direct bill, each retirement counted once", async () => {
    const shots: string[] = [];
    for (let s = 0; s < 4; s++) shots.push(base64(await encodePng(screenshotPixels(1200, 900, 90 + s), 1200, 900, 3)));
    const tag = `deno${Date.now().toString(36)}`;
    const session: AgentSession = { format: "anthropic", model: `claude-sonnet-4-5-${tag}`, tag, turns: 26, shots };
    const direct = await play(session, `${emulator.url}/llm/anthropic`, `direct-${tag}`);
    const through = await play(session, `${deno.url}/anthropic`, `proxy-${tag}`);
    const row = await statsRow(session.model, session.turns);
    expect(row.cost_usd).toBeCloseTo(through.usd, 6);
    expect(Math.abs(row.cost_as_sent_usd - direct.usd) / direct.usd).toBeLessThan(0.03);
    expect(row.saved_usd).toBeCloseTo(row.cost_as_sent_usd - row.cost_usd, 9);
    expect(row.images_retired).toBe(Number(through.headers.at(-1)!.get("x-edge-retired")));
    expect(row.images_retired).toBeGreaterThan(0);
  }, 120_000);

  it("a text-only session: as sent is the bill", async () => {
    const tag = `denotext${Date.now().toString(36)}`;
    const session: AgentSession = { format: "anthropic", model: `claude-sonnet-4-5-${tag}`, tag, turns: 4, shots: [] };
    const through = await play(session, `${deno.url}/anthropic`, `proxy-${tag}`);
    for (const h of through.headers) expect(h.get("x-edge-saved-usd")).toBe("0.000000");
    const row = await statsRow(session.model, session.turns);
    expect(row.cost_as_sent_usd).toBe(row.cost_usd);
    expect(row.saved_usd).toBe(0);
  }, 60_000);
});
