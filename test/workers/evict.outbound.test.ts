/**
 * evictOutbound, the provider proxy's entry to the cost strategy, against the real KV store: the
 * request's own model decides the ceilings and prices, the session is remembered under the proxy's
 * key, the marker goes before the front, and the answer carries the stats the proxy reports.
 */
import { describe, expect, it } from "vitest";
import { evictOutbound } from "../../shared/eviction/evict.service";
import { KvStore } from "../../workers/cache.kv";
import { anthropicScreenshots, conversation, screenshots } from "../node/eviction.fixtures";
import { testEnv, uniqueToken } from "./helpers";

const deps = (now: () => number) => ({ cache: new KvStore(testEnv.CACHE), clock: now });

describe("evictOutbound (the proxy's entry)", () => {
  it("Anthropic: the model's 100-image ceiling, one cache_control before the front, the session remembered: a cold retirement stays on the next warm call", async () => {
    const sessionKey = `proxy-${uniqueToken()}`;
    let now = Date.parse("2026-12-01T10:00:00Z");
    const messages = anthropicScreenshots(30, { width: 1280, height: 800 });
    const system = [{ type: "text", text: "You are a browser agent.", cache_control: { type: "ephemeral" } }];
    const first = await evictOutbound(
      { format: "anthropic", messages, model: "claude-sonnet-4-5", sessionKey, system },
      deps(() => now),
    );
    expect(first.stats.limits.max_blocks).toBe(100);
    expect(first.stats.estimate?.model).toBe("claude-sonnet-4");
    expect(first.stats.cache_marker).toBeDefined();
    expect(JSON.stringify(first.messages).split('"cache_control"').length - 1).toBe(1); // ours; the system's is not in messages
    // Ten minutes later the cache is cold: retire down to the floor, and say so.
    now += 10 * 60_000;
    const cold = await evictOutbound(
      { format: "anthropic", messages, model: "claude-sonnet-4-5", sessionKey, system },
      deps(() => now),
    );
    expect(cold.stats.reason).toBe("cold_cache");
    expect(cold.retired).toBe(30 - 3);
    // The sentence counts what this move retired, beyond the front the first call left.
    expect(first.retired).toBeLessThan(27);
    expect(cold.stats.explanation).toBe(
      `Retired ${27 - first.retired} tool images because the cache was cold: nothing cached is rewritten.`,
    );
    // The next call, warm, keeps them retired (the memory is in KV under the proxy's key).
    now += 30_000;
    const next = await evictOutbound(
      {
        format: "anthropic",
        messages: anthropicScreenshots(31, { width: 1280, height: 800 }),
        model: "claude-sonnet-4-5",
        sessionKey,
        system,
      },
      deps(() => now),
    );
    expect(next.retired).toBe(27);
    expect(next.stats.reason).toBe("held");
  });

  it("a token count (remembers: false) reads the session but leaves it: the next real call still sees a cold cache", async () => {
    const sessionKey = `proxy-count-${uniqueToken()}`;
    let now = Date.parse("2026-12-01T10:00:00Z");
    const call = (n: number, remembers: boolean) =>
      evictOutbound(
        {
          format: "anthropic",
          messages: anthropicScreenshots(n, { width: 1280, height: 800 }),
          model: "claude-sonnet-4-5",
          sessionKey,
          remembers,
        },
        deps(() => now),
      );
    const first = await call(12, true);
    expect(first.retired).toBe(0);
    now += 4 * 60_000; // a count inside the cache's 5 minutes: warm, nothing worth retiring
    expect((await call(12, false)).retired).toBe(0);
    now += 2 * 60_000; // 6 minutes after the last real call: the provider's cache has expired
    const next = await call(13, true);
    expect([next.stats.reason, next.retired]).toEqual(["cold_cache", 13 - 3]);
  });

  it("OpenAI GPT-5.6: 500 images, an explicit prompt_cache_breakpoint, writes priced at 1.25x; the input is never changed", async () => {
    const messages = conversation("openai", screenshots(40));
    const before = JSON.stringify(messages);
    const out = await evictOutbound(
      { format: "openai", messages, model: "gpt-5.6-sol", sessionKey: `proxy-${uniqueToken()}` },
      deps(() => 0),
    );
    expect(out.stats.limits.max_blocks).toBe(500);
    expect(JSON.stringify(out.messages)).toContain('"prompt_cache_breakpoint":{"mode":"explicit"}');
    expect(out.stats.estimate!.cache_write_usd).toBeCloseTo(
      (out.stats.estimate!.cache_write_tokens * 5 * 1.25) / 1e6,
      5,
    );
    expect(JSON.stringify(messages)).toBe(before);
    // The operator's pricing.models, as the proxy hands them over, price the same writes.
    const priced = await evictOutbound(
      {
        format: "openai",
        messages,
        model: "gpt-5.6-sol",
        sessionKey: `proxy-${uniqueToken()}`,
        priceOverrides: { "gpt-5.6-sol": { input: 50, cacheWrite5m: 62.5 } },
      },
      deps(() => 0),
    );
    expect(priced.stats.estimate!.cache_write_tokens).toBe(out.stats.estimate!.cache_write_tokens);
    // A model the table does not know (a router's, a local server's) gets no field its endpoint may refuse.
    for (const model of ["meta-llama/llama-4-maverick", "anthropic/claude-sonnet-4.5"]) {
      const unknown = await evictOutbound(
        { format: "openai", messages, model, sessionKey: `proxy-${uniqueToken()}` },
        deps(() => 0),
      );
      expect(JSON.stringify(unknown.messages), model).not.toContain("prompt_cache_breakpoint");
    }
    expect(priced.stats.estimate!.cache_write_usd).toBeCloseTo(
      (out.stats.estimate!.cache_write_tokens * 62.5) / 1e6,
      5,
    );
  });
});
