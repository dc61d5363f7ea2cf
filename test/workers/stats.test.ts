/**
 * The savings ledger in workerd (docs/stats.md): what each tool counts reaches `GET /v1/stats`
 * through the real Workers entry (waitUntil flush) and the LedgerDO, exactly under concurrency,
 * with every key of the contract present. The ledger is one object for the whole test run, so
 * each test reads its own increments as the difference of two reads of the last 24 hours (not
 * the current hour, which may turn between them).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../../workers/index";
import type { WorkerEnv } from "../../workers/env";
import { createApp } from "../../shared/app/app";
import { modelRules, usageCost } from "../../shared/llm/models.table";
import { consoleLogger } from "../../shared/log";
import { LEDGER_FAILED_NAME, LEDGER_NAMES_PER_HOUR, LEDGER_OTHER_NAME, LedgerBuffer } from "../../shared/stats/ledger";
import { ANSWER_NAMES } from "../../shared/stats/stats.service";
import type { LedgerRow, Logger } from "../../shared/ports";
import { LEDGER_OBJECT } from "../../workers/ledger.do";
import { toBase64 } from "../../shared/media/data-url";
import { durableLedgerStore, workersDeps } from "../../workers/deps";
import { encodePng, photoPixels } from "../fixtures/images";
import {
  bothTtlsBody,
  call,
  callJson,
  EMULATOR,
  expectErrorShape,
  ledgerCountsOf,
  providerCalls,
  testEnv,
  uniqueToken,
} from "./helpers";
import { answeredTogether, llmCalls } from "../support/emulator-client";
import { searchJoiners } from "./flight-joiners";

const stats = async (window = "24h", vars?: Record<string, unknown>) => {
  const res = await callJson(`/v1/stats?window=${window}`, vars ? { vars } : {});
  expect(res.status).toBe(200);
  return res.body;
};

/** `text` sent to the proxied Anthropic Messages API under `model`, with a key of its own; the answer's status. */
async function sendMessage(model: string, text = "hi"): Promise<number> {
  const response = await call("/anthropic/v1/messages", {
    body: { model, max_tokens: 8, messages: [{ role: "user", content: text }] },
    headers: { "x-api-key": `k-${uniqueToken()}` },
  });
  await response.text();
  return response.status;
}

/** The 24-hour stats once `requests` more proxied requests than `before` are written. */
async function statsAfter(before: any, requests: number): Promise<any> {
  let after = before;
  await vi.waitFor(
    async () => {
      await call("/healthz"); // a later request's flush writes the earlier ones' counts
      after = await stats("24h");
      expect(after.totals.llm.requests - before.totals.llm.requests).toBe(requests);
    },
    { timeout: 5000, interval: 100 },
  );
  return after;
}

const KEYS = {
  web_search: ["requests", "provider_calls", "hits", "coalesced", "bypass", "errors", "saved_usd"],
  web_extract: ["requests", "provider_calls", "hits", "coalesced", "bypass", "errors", "refused", "saved_usd"],
  vision: ["loads", "passed_through", "fitted", "bytes_in", "bytes_out", "cap_refusals"],
  evict: ["requests", "images_retired"],
  llm: [
    "requests",
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "images_fitted",
    "image_blocks_fitted",
    "images_retired",
    "tool_results_retired",
    "tool_result_chars_saved",
    "bytes_saved",
    "errors",
    "cost_usd",
    "cost_as_sent_usd",
    "saved_usd",
    "cost_without_cache_usd",
    "cache_saved_usd",
  ],
};

describe("GET /v1/stats", () => {
  it("says a deployment without the LEDGER binding has no ledger, rather than asking to try again", async () => {
    const res = await callJson("/v1/stats?window=1h", { vars: { LEDGER: undefined } });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("stats_unavailable");
    expect(res.body.error.message).toContain("no LEDGER binding");
    expect(res.body.error.message).not.toContain("try again");
  });

  it("answers every key of the contract, zeros included, for each window", async () => {
    for (const window of ["1h", "24h", "7d", "30d"]) {
      const body = await stats(window);
      expect(Object.keys(body).sort()).toEqual([
        "bucket",
        "by_model",
        "by_provider",
        "from",
        "prices",
        "saved_usd",
        "series",
        "success",
        "to",
        "totals",
      ]);
      for (const [tool, keys] of Object.entries(KEYS)) {
        expect(Object.keys(body.totals[tool]).sort(), tool).toEqual([...keys].sort());
        for (const key of keys) expect(typeof body.totals[tool][key]).toBe("number");
      }
      expect(body.bucket).toBe("hour");
      const hours = { "1h": 1, "24h": 24, "7d": 168, "30d": 720 }[window]!;
      expect(Date.parse(body.to) - Date.parse(body.from)).toBe(hours * 3_600_000);
      expect(body.from).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
      expect(Object.keys(body.by_provider).sort()).toEqual(["llm", "web_extract", "web_search"]);
      expect(body.by_model.llm).toBeTypeOf("object");
      expect(body.prices.search.tavily).toBe(0.008);
      expect(body.prices.extract.firecrawl).toBe(0.00083);
    }
    expect((await callJson("/v1/stats")).body.to).toBeTypeOf("string");
  });

  it("refuses an unknown window, a parameter it does not take or window twice with a 400, and asks for a token like every /v1 route", async () => {
    const bad = await callJson("/v1/stats?window=2h");
    expect(bad.status).toBe(400);
    expect(expectErrorShape(bad.body).code).toBe("invalid_request");
    // A parameter the route does not take is named, not ignored for the default 24 hours.
    const misspelled = await callJson("/v1/stats?windows=7d");
    expect(misspelled.status).toBe(400);
    expect(expectErrorShape(misspelled.body).message).toContain('"windows" is not it');
    const twice = await callJson("/v1/stats?window=7d&window=1h");
    expect(twice.status).toBe(400);
    expect(expectErrorShape(twice.body).message).toContain("more than once");
    const long = await callJson(`/v1/stats?${"w".repeat(5000)}=1`);
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body).length).toBeLessThan(600);
    const locked = await callJson("/v1/stats", {
      vars: { API_TOKENS: "stats-token-1", SECURITY_ALLOW_ANONYMOUS: "false" },
    });
    expect(locked.status).toBe(401);
    const open = await callJson("/v1/stats", {
      vars: { API_TOKENS: "stats-token-1", SECURITY_ALLOW_ANONYMOUS: "false" },
      headers: { authorization: "Bearer stats-token-1" },
    });
    expect(open.status).toBe(200);
  });

  it("counts 64 identical concurrent searches exactly: provider_calls + hits + coalesced = 64, and prices what was avoided", async () => {
    const before = await stats();
    const gate = `sixty-four-${uniqueToken()}`;
    const q = `ledger sixty-four [gate:${gate}] ${uniqueToken()}`;
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 63, count: () => searchJoiners(q) },
      Array.from({ length: 64 }, () => callJson("/v1/web_search", { body: { query: q } })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const after = await stats();
    const delta = (key: string) => after.totals.web_search[key] - before.totals.web_search[key];
    expect(delta("requests")).toBe(64);
    expect(delta("provider_calls") + delta("hits") + delta("coalesced")).toBe(64);
    expect(delta("provider_calls")).toBe(await providerCalls("tavily", q));
    expect(delta("errors")).toBe(0);
    const avoided = delta("hits") + delta("coalesced");
    expect(delta("provider_calls")).toBe(1);
    expect(after.totals.web_search.saved_usd - before.totals.web_search.saved_usd).toBeCloseTo(avoided * 0.008, 9);
    expect(after.by_provider.web_search.tavily.requests - (before.by_provider.web_search.tavily?.requests ?? 0)).toBe(
      64,
    );
    expect(after.saved_usd - before.saved_usd).toBeCloseTo(avoided * 0.008, 9);
    const hour = after.series.at(-1);
    expect(hour.web_search.requests).toBeGreaterThanOrEqual(64);
  });

  it("counts 16 callers of one rescued search as one paid bypass and 15 joined calls (bypass stays a part of provider_calls)", async () => {
    const before = await stats();
    const gate = `rescue-${uniqueToken()}`;
    const q = `ledger rescue [fail:500@tavily] [gate:${gate}] ${uniqueToken()}`;
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 15, count: () => searchJoiners(q) },
      Array.from({ length: 16 }, () => callJson("/v1/web_search", { body: { query: q } })),
    );
    expect(answers.map((a) => a.body.cache)).toEqual(Array(16).fill("bypass"));
    const after = await stats();
    const delta = (key: string) => after.totals.web_search[key] - before.totals.web_search[key];
    expect(delta("requests")).toBe(16);
    expect(delta("provider_calls")).toBe(1);
    expect(delta("coalesced")).toBe(15);
    expect(delta("bypass")).toBe(1);
    expect(await providerCalls("keyless", q)).toBe(1);
  });

  it("counts an extract per URL: a paid page, its hit, a refusal, an in-band failure", async () => {
    const before = await stats();
    const tok = uniqueToken();
    const url = `https://docs.example.com/${tok}/guide`;
    const first = await callJson("/v1/web_extract", {
      body: { urls: [url, "http://169.254.169.254/latest", `https://docs.example.com/${tok}/[fail:503]`] },
    });
    expect(first.status).toBe(200);
    const second = await callJson("/v1/web_extract", { body: { urls: [url] } });
    expect(second.body.results[0].cached).toBe(true);
    const after = await stats();
    const delta = (key: string) => after.totals.web_extract[key] - before.totals.web_extract[key];
    expect([delta("requests"), delta("provider_calls"), delta("hits"), delta("refused"), delta("errors")]).toEqual([
      4, 1, 1, 1, 1,
    ]);
  });

  it("counts a refusal after the gate as refused, not as an error: a redirect to metadata, a hit on a host now blocked", async () => {
    const tok = uniqueToken();
    const direct = { WEB_EXTRACT_PROVIDER: "direct" };
    const moved = `http://site.example.com/pages/redirect?to=${encodeURIComponent(`http://moved.example.com/pages/article?t=${tok}`)}&t=${tok}`;
    const paid = await callJson("/v1/web_extract", { body: { urls: [moved] }, vars: direct });
    expect(paid.body.results[0].final_url).toContain("moved.example.com");
    const before = await stats();
    const redirected = `http://site.example.com/pages/redirect?to=${encodeURIComponent("http://169.254.169.254/latest")}&t=${tok}`;
    const refused = await callJson("/v1/web_extract", {
      body: { urls: [redirected, moved] },
      vars: { ...direct, SECURITY_WEBSITE_BLOCKLIST: "moved.example.com" },
    });
    expect(refused.body.results.map((r: any) => r.error?.code)).toEqual([
      "blocked_private_address",
      "blocked_by_policy",
    ]);
    const after = await stats();
    const delta = (key: string) => after.totals.web_extract[key] - before.totals.web_extract[key];
    expect([delta("requests"), delta("refused"), delta("errors")]).toEqual([2, 2, 0]);
  });

  it("counts a priced provider's hits at its configured price (pricing.search.<name>)", async () => {
    const vars = { PRICING_SEARCH_TAVILY: "0.5" };
    const before = await stats("24h", vars);
    const q = `priced ${uniqueToken()}`;
    for (let i = 0; i < 3; i++)
      expect((await callJson("/v1/web_search", { body: { query: q }, vars })).status).toBe(200);
    const after = await stats("24h", vars);
    expect(after.prices.search.tavily).toBe(0.5);
    expect(after.totals.web_search.hits - before.totals.web_search.hits).toBe(2);
    expect(after.totals.web_search.saved_usd - before.totals.web_search.saved_usd).toBeCloseTo(1, 9);
  });

  it("counts vision loads, bytes in and out, and refusals by the repeat cap", async () => {
    const small = await encodePng(photoPixels(320, 200, 3), 320, 200, 3);
    const before = await stats();
    const session = uniqueToken();
    const body = { image: { data: toBase64(small) }, session_id: session, caller: "subagent" };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await callJson("/v1/vision_analyze", { body }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 409]);
    const after = await stats();
    const delta = (key: string) => after.totals.vision[key] - before.totals.vision[key];
    expect(delta("loads")).toBe(3);
    expect(delta("passed_through") + delta("fitted")).toBe(3);
    expect(delta("cap_refusals")).toBe(1);
    expect(delta("bytes_in")).toBe(3 * small.byteLength);
    // The answers carry the image inside their content block; the ledger counts its raw bytes.
    expect(delta("bytes_out")).toBeGreaterThan(0);
    expect(delta("bytes_out")).toBeLessThanOrEqual(delta("bytes_in"));
  });

  it("counts evictions by strategy", async () => {
    const before = await stats();
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
    const messages = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: i % 2 ? "ok" : [{ type: "tool_result", tool_use_id: `t${i}`, content: [image] }],
    }));
    const res = await callJson("/v1/context/evict", { body: { format: "anthropic", messages } });
    expect(res.status).toBe(200);
    const after = await stats();
    expect(after.totals.evict.requests - before.totals.evict.requests).toBe(1);
    expect(after.totals.evict.images_retired - before.totals.evict.images_retired).toBe(res.body.retired);
    expect(after.by_model.evict.hermes.requests - (before.by_model.evict.hermes?.requests ?? 0)).toBe(1);
  });

  it("keeps a caller's model name to 200 characters in the ledger: a 100,000-character one is counted, cut", async () => {
    const before = await stats("24h");
    // A name the provider accepts (the emulated Anthropic knows the family): a refused one is "(failed)".
    const model = `claude-sonnet-4-5-${uniqueToken()}${"m".repeat(100_000)}`;
    expect(await sendMessage(model)).toBe(200);
    const after = await statsAfter(before, 1);
    expect(after.by_model.llm[model.slice(0, 200)]?.requests).toBe(1);
    expect(Math.max(...Object.keys(after.by_model.llm).map((name) => name.length))).toBeLessThanOrEqual(200);
  });

  it("counts a request the provider refused or failed under (failed), not under a model string no answer confirmed", async () => {
    const model = `made-up-${uniqueToken()}`;
    const before = await stats("24h");
    for (const status of [404, 401, 529]) expect(await sendMessage(model, `[fail:${status}] hi`)).toBe(status);
    const after = await statsAfter(before, 3);
    expect(after.by_model.llm[model]).toBeUndefined();
    const failed = (answer: any) => answer.by_model.llm[LEDGER_FAILED_NAME] ?? { requests: 0, errors: 0 };
    expect(failed(after).requests - failed(before).requests).toBe(3);
    expect(failed(after).errors - failed(before).errors).toBe(3);
    expect(after.totals.llm.errors - before.totals.llm.errors).toBe(3);
  });

  it("counts a model's 429 under its name once the provider has answered that name, under (failed) before", async () => {
    const [model, other] = [`claude-sonnet-4-5-${uniqueToken()}`, `claude-sonnet-4-5-${uniqueToken()}`];
    const before = await stats("24h");
    expect(await sendMessage(model)).toBe(200);
    expect(await sendMessage(model, "[fail:429] hi")).toBe(429);
    expect(await sendMessage(other, "[fail:429] hi")).toBe(429);
    const after = await statsAfter(before, 3);
    expect(after.by_model.llm[model]).toMatchObject({ requests: 2, errors: 1 });
    expect(after.by_model.llm[other]).toBeUndefined();
    const failed = (answer: any) => answer.by_model.llm[LEDGER_FAILED_NAME]?.requests ?? 0;
    expect(failed(after) - failed(before)).toBe(1);
  });

  it("writes a plain (not streamed) proxied answer's tokens when its body ends, with no later request", async () => {
    const model = `claude-sonnet-4-5-${uniqueToken()}`;
    const response = await call("/anthropic/v1/messages", {
      body: { model, max_tokens: 8, messages: [{ role: "user", content: "hi" }] },
      headers: { "x-api-key": `k-${uniqueToken()}` },
    });
    expect(response.headers.get("content-type")).toContain("application/json");
    await response.text();
    // Read the LedgerDO itself: a request through the Worker would flush on its own account.
    await vi.waitFor(
      async () => {
        expect(await ledgerCountsOf(model)).toMatchObject({
          requests: 1,
          output_tokens: expect.any(Number),
        });
      },
      { timeout: 3_000, interval: 100 },
    );
  });

  it("counts proxied Anthropic calls, plain and streamed, at the tokens and price the emulator billed", async () => {
    const model = "claude-sonnet-4-5";
    const before = await stats();
    const tag = uniqueToken();
    // A 1-hour breakpoint on the system prompt and a 5-minute one on the message: both TTLs written.
    const body = (stream: boolean) => bothTtlsBody(model, `${tag} ${stream}`, stream);
    for (const stream of [false, true]) {
      const response = await call("/anthropic/v1/messages", {
        body: body(stream),
        headers: { "x-api-key": `k-${tag}` },
      });
      expect(response.status).toBe(200);
      await response.text(); // the usage is counted as the answer goes by, and at its end
    }
    const billed: any[] = await llmCalls(EMULATOR, tag);
    expect(billed).toHaveLength(2);
    const usage = { input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0 };
    for (const call of billed)
      for (const kind of Object.keys(usage) as (keyof typeof usage)[]) usage[kind] += call.usage[kind];
    expect(usage.cacheWrite5m).toBeGreaterThan(0);
    expect(usage.cacheWrite1h).toBeGreaterThan(0);

    // The answers' usage is written after they ended: wait until a later request's flush took it.
    let after = before;
    const delta = (key: string) => after.totals.llm[key] - before.totals.llm[key];
    await vi.waitFor(
      async () => {
        await call("/healthz");
        after = await stats();
        expect(delta("output_tokens")).toBe(usage.output);
      },
      { timeout: 5_000, interval: 50 },
    );
    expect(delta("requests")).toBe(2);
    expect(delta("errors")).toBe(0);
    expect(delta("input_tokens")).toBe(usage.input);
    expect(delta("cache_read_tokens")).toBe(usage.cacheRead);
    expect(delta("cache_write_tokens")).toBe(usage.cacheWrite5m + usage.cacheWrite1h);
    const expected = usageCost(modelRules("anthropic", model).prices, usage);
    expect(delta("cost_usd")).toBeCloseTo(expected.costUsd, 8);
    expect(delta("cost_without_cache_usd")).toBeCloseTo(expected.withoutCacheUsd, 8);
    // The provider's caching apart, under its own name; the service changed nothing: no saving of its own.
    expect(after.totals.llm.cache_saved_usd).toBeCloseTo(
      after.totals.llm.cost_without_cache_usd - after.totals.llm.cost_usd,
      8,
    );
    expect(delta("cache_saved_usd")).toBeCloseTo(expected.withoutCacheUsd - expected.costUsd, 8);
    expect(delta("cost_as_sent_usd")).toBeCloseTo(expected.costUsd, 8);
    expect(delta("saved_usd")).toBeCloseTo(0, 8);
    // The prices used, under snake_case names as every field of the API.
    expect(after.prices.models[model]).toEqual({
      input: 3,
      cache_write_5m: 3.75,
      cache_write_1h: 6,
      cache_read: 0.3,
      output: 15,
      // Sonnet 4.5 over 200,000 prompt tokens (docs/eviction.md, "Price tiers by prompt size").
      tiers: [
        {
          above_prompt_tokens: 200_000,
          input: 6,
          cache_write_5m: 7.5,
          cache_write_1h: 12,
          cache_read: 0.6,
          output: 22.5,
        },
      ],
    });
  });

  it("keeps answering after three weeks of callers naming a new model in every request: 200, a bounded answer, every request counted", async () => {
    // What 126,000 proxied requests with a new 200-character model name each leave in the object:
    // 250 names an hour, written as the ledger writes them, in the three weeks from 8 days back
    // (the shorter windows other tests read stay clear, and the 30-day window keeps them all
    // should the hour turn during the test). Read back whole, such weeks were past a Durable
    // Object answer's 32 MiB: a 503 until they aged out.
    const ledger = testEnv.LEDGER.get(testEnv.LEDGER.idFromName(LEDGER_OBJECT));
    const current = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const before = await stats("30d");
    const hours = Array.from({ length: 21 * 24 }, (_, i) => current - (8 * 24 + i) * 3_600_000);
    const tag = uniqueToken();
    for (const hour of hours) {
      const batch: LedgerRow[] = [];
      for (let i = 0; i < 250; i++) {
        const model = `${tag}-${hour}-${i}-`.padEnd(200, "x");
        batch.push({ hour, tool: "llm", provider: "anthropic", model, counter: "requests", value: 1 });
        batch.push({ hour, tool: "llm", provider: "anthropic", model, counter: "errors", value: 1 });
      }
      await ledger.add(batch);
    }
    // A model really used, in an hour of its own seven and a half days back (the weeks' hours are
    // full): named in the answer however many names were read before it.
    const used = `claude-sonnet-4-5-${tag}`;
    const newest = current - 180 * 3_600_000;
    await ledger.add([
      { hour: newest, tool: "llm", provider: "anthropic", model: used, counter: "requests", value: 5_000 },
    ]);
    const res = await call("/v1/stats?window=30d");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeLessThan(512 * 1024);
    const after = JSON.parse(text);
    expect(after.totals.llm.requests - before.totals.llm.requests).toBe(hours.length * 250 + 5_000);
    expect(after.by_model.llm[used]?.requests).toBe(5_000);
    expect(after.totals.llm.errors - before.totals.llm.errors).toBe(hours.length * 250);
    const names = Object.keys(after.by_model.llm);
    expect(names.length).toBeLessThanOrEqual(ANSWER_NAMES + 1);
    expect(after.by_model.llm[LEDGER_OTHER_NAME].requests).toBeGreaterThanOrEqual(hours.length * 150);
  }, 120_000);

  it("keeps a caller's first 100 model names of an hour apart and counts the later ones under (other), every request counted", async () => {
    // Five days back: an hour no other test writes, so this test's names are its bucket's first.
    const at = Date.now() - 5 * 24 * 3_600_000;
    const ledger = new LedgerBuffer(durableLedgerStore(testEnv), consoleLogger);
    const app = createApp(workersDeps(testEnv, { clock: () => at, ledger }));
    const tag = uniqueToken();
    const sent = LEDGER_NAMES_PER_HOUR + 20;
    for (let i = 0; i < sent; i++) {
      const res = await app.request(
        "/anthropic/v1/messages",
        {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": `k-${tag}` },
          body: JSON.stringify({
            model: `claude-sonnet-4-5-${tag}-${i}`,
            max_tokens: 8,
            messages: [{ role: "user", content: "hi" }],
          }),
        },
        testEnv,
      );
      await res.text();
    }
    await ledger.flush();
    const res = await app.request("/v1/stats?window=1h", {}, testEnv);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const mine = Object.keys(body.by_model.llm).filter((name) => name.includes(`-${tag}-`));
    expect(mine.sort()).toEqual(
      Array.from({ length: LEDGER_NAMES_PER_HOUR }, (_, i) => `claude-sonnet-4-5-${tag}-${i}`).sort(),
    );
    expect(body.by_model.llm[LEDGER_OTHER_NAME].requests).toBe(sent - LEDGER_NAMES_PER_HOUR);
    expect(body.totals.llm.requests).toBe(sent);
    expect(body.prices.models[LEDGER_OTHER_NAME]).toBeUndefined();
  }, 60_000);

  it("never fails or delays a request when the ledger cannot be written: it logs ledger_write_failed", async () => {
    const warnings: string[] = [];
    const log: Logger = { info: () => {}, warn: (event) => void warnings.push(event), error: () => {} };
    const ledger = new LedgerBuffer(
      {
        add: () => Promise.reject(new Error("storage down")),
        report: () => Promise.reject(new Error("storage down")),
        sessions: () => Promise.reject(new Error("storage down")),
      },
      log,
    );
    const app = createApp(workersDeps(testEnv, { log, ledger }));
    const res = await app.request(
      "/v1/web_search",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `unwritable ${uniqueToken()}` }),
      },
      testEnv,
    );
    expect(res.status).toBe(200);
    expect(ledger.pendingRows).toBeGreaterThan(0);
    await ledger.flush();
    expect(ledger.pendingRows).toBe(0);
    expect(warnings).toEqual(["ledger_write_failed"]);

    // A store that hangs (a stand-in for an overloaded LedgerDO): the Workers entry's answer
    // arrives, body and all, while the write it started is still held.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let writeStarted = () => {};
    const started = new Promise<void>((resolve) => {
      writeStarted = resolve;
    });
    let written = false;
    const hangingLedger = {
      idFromName: (name: string) => testEnv.LEDGER.idFromName(name),
      get: () => ({
        add: async () => {
          writeStarted();
          await held;
          written = true;
        },
        report: () => held,
      }),
    };
    const ctx = createExecutionContext();
    const answer = await worker.fetch(
      new Request("https://service.test/v1/web_search", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `held ledger ${uniqueToken()}` }),
      }),
      { ...testEnv, LEDGER: hangingLedger, LEDGER_FLUSH_MS: "0" } as unknown as WorkerEnv,
      ctx,
    );
    expect([answer.status, ((await answer.json()) as any).success]).toEqual([200, true]);
    await started;
    expect(written).toBe(false);
    release();
    await waitOnExecutionContext(ctx);
    expect(written).toBe(true);
  }, 15_000);
});

describe("GET /dashboard", () => {
  it("serves the page and its script from this origin, with a policy that lets nothing else load", async () => {
    const { call } = await import("./helpers");
    const page = await call("/dashboard");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<script src="/dashboard/app.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await call("/dashboard/app.js");
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(await script.text()).toContain("/v1/stats?window=");
  });
});
