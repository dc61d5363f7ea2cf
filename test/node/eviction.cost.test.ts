/**
 * The cost strategy of context/evict through the service: true ceilings, the cold-cache and
 * remembered fronts, the front breakpoint (never moving the client's own, never more than 4), and
 * retired images that become their vision_analyze description. Hermes stays the default.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ANTHROPIC_MESSAGES, blockBefore, countBreakpoints } from "../../shared/llm/anthropic.messages";
import { EvictRequest } from "../../shared/eviction/evict.schema";
import { modelRules } from "../../shared/llm/models.table";

const PROMPT_CACHE_TTL_MS = modelRules("anthropic", undefined).cache.ttlMs;
import { evictContext } from "../../shared/eviction/evict.service";
import { describedImageText, RETIRED_IMAGE_TEXT } from "../../shared/llm/image-blocks";
import { loadOf } from "../../shared/eviction/policy";
import { anthropicScreenshots, conversation, deepFreeze, FORMATS, pngBase64, screenshots } from "./eviction.fixtures";

const SMALL = { width: 1280, height: 800 };
const NOW = Date.parse("2026-12-01T10:00:00Z");
const parse = (body: unknown) => EvictRequest.parse(body);

/** Where every cache_control of a conversation stands: "message/block" or "message/block/part". */
function markers(messages: readonly unknown[]): string[] {
  const out: string[] = [];
  messages.forEach((m, i) => {
    const content = (m as { content?: unknown }).content;
    if (!Array.isArray(content)) return;
    content.forEach((block, b) => {
      if ((block as Record<string, unknown>)?.cache_control) out.push(`${i}/${b}`);
      const nested = (block as { content?: unknown })?.content;
      if (Array.isArray(nested))
        nested.forEach((p, k) => (p as Record<string, unknown>)?.cache_control && out.push(`${i}/${b}/${k}`));
    });
  });
  return out;
}

/** Hermes-style client markers on the last `n` messages' last blocks. */
function withClientMarkers(messages: Record<string, unknown>[], n: number): Record<string, unknown>[] {
  return messages.map((m, i) => {
    if (i < messages.length - n || !Array.isArray(m.content)) return m;
    const content = (m.content as Record<string, unknown>[]).slice();
    content[content.length - 1] = { ...content[content.length - 1]!, cache_control: { type: "ephemeral" } };
    return { ...m, content };
  });
}

describe("strategy", () => {
  it.each(FORMATS)("%s: hermes is the default, and exactly the policy of eviction.md", (format) => {
    for (const n of [20, 21, 29]) {
      const messages = conversation(format, screenshots(n));
      const byDefault = evictContext(parse({ format, messages }));
      expect(evictContext(parse({ format, messages, strategy: "hermes" }))).toEqual(byDefault);
      expect(byDefault.retired).toBe({ 20: 0, 21: 8, 29: 16 }[n]);
      expect(byDefault.stats).not.toHaveProperty("strategy");
    }
  });

  it("refuses the cost-only fields with hermes; takes manage_cache in both formats (OpenAI places prompt_cache_breakpoint from GPT-5.6)", () => {
    expect(EvictRequest.safeParse({ format: "openai", messages: [], session_id: "s" }).success).toBe(false);
    expect(EvictRequest.safeParse({ format: "openai", messages: [], system: "s" }).success).toBe(false);
    expect(
      EvictRequest.safeParse({ format: "openai", messages: [], strategy: "cost", manage_cache: true }).success,
    ).toBe(true);
    expect(
      EvictRequest.safeParse({ format: "anthropic", messages: [], strategy: "cost", last_request_at: "yesterday" })
        .success,
    ).toBe(false);
    expect(
      EvictRequest.safeParse({
        format: "anthropic",
        messages: [],
        strategy: "cost",
        manage_cache: true,
        last_request_at: "2026-12-01T09:00:00Z",
      }).success,
    ).toBe(true);
  });
});

describe("cost: ceilings", () => {
  it("takes Anthropic's 100-image ceiling when every image is at most 2,000 px, else the default 20", () => {
    const small = evictContext(
      parse({
        format: "anthropic",
        strategy: "cost",
        provider: "anthropic",
        messages: anthropicScreenshots(30, SMALL),
      }),
      { now: NOW },
    );
    expect(small.stats.limits.max_blocks).toBe(100);
    const big = anthropicScreenshots(30, { width: 2_400, height: 1_600 });
    const out = evictContext(parse({ format: "anthropic", strategy: "cost", provider: "anthropic", messages: big }), {
      now: NOW,
    });
    expect(out.stats.limits.max_blocks).toBe(20);
    expect(out.stats.image_blocks_after).toBeLessThanOrEqual(20);
    // One request sees the whole conversation: the front moved when the 21st image came, before this
    // one; with no session remembered, the rule that put it there is reported, and the sentence says so.
    expect(out.stats.reason).toBe("ceiling");
    expect(out.stats.explanation).toMatch(
      /^Retired \d+ tool images, where the ceiling rule put the front at an earlier message of this conversation; send session_id/,
    );
  });

  it("moves the front only down to the floor, and never sends a request over the true ceiling", () => {
    for (const n of [21, 60, 101, 120]) {
      const messages = anthropicScreenshots(n, SMALL);
      const out = evictContext(parse({ format: "anthropic", strategy: "cost", provider: "anthropic", messages }), {
        now: NOW,
      });
      expect(out.stats.fits).toBe(true);
      expect(out.stats.image_blocks_after).toBeLessThanOrEqual(100);
      // Where it moved last, it left exactly the floor: the rest are newer than that move.
      const shorter = evictContext(
        parse({
          format: "anthropic",
          strategy: "cost",
          provider: "anthropic",
          messages: anthropicScreenshots(out.retired + 3, SMALL),
        }),
        { now: NOW },
      );
      expect(shorter.retired).toBe(out.retired);
    }
  });
});

describe("cost: time and memory", () => {
  const messages = anthropicScreenshots(12, SMALL);
  const base = { format: "anthropic", strategy: "cost", provider: "anthropic", messages } as const;

  it("retires down to the floor when the cache went cold, if the session can remember it", () => {
    const cold = evictContext(
      parse({ ...base, session_id: "s1", last_request_at: new Date(NOW - PROMPT_CACHE_TTL_MS - 1_000).toISOString() }),
      { now: NOW },
    );
    expect(cold.stats.reason).toBe("cold_cache");
    expect(cold.stats.cold_cache).toBe(true);
    expect(cold.retired).toBe(12 - 3);
    const warm = evictContext(
      parse({ ...base, session_id: "s1", last_request_at: new Date(NOW - 60_000).toISOString() }),
      { now: NOW },
    );
    expect(warm.retired).toBe(0);
    expect(warm.stats.reason).toBe("under_ceiling");
  });

  it("does not retire early on a cold cache without session_id, and says why", () => {
    const out = evictContext(parse({ ...base, last_request_at: new Date(NOW - 10 * 60_000).toISOString() }), {
      now: NOW,
    });
    expect(out.retired).toBe(0);
    expect(out.stats.cache_marker_note).toMatch(/session_id/);
  });

  it("requests_left (with session_id): a session that says it will last retires when the reads it saves pay the rewrite; one about to end does not", () => {
    const told = { ...base, session_id: "told", messages: anthropicScreenshots(14, SMALL) };
    const guessed = evictContext(parse({ ...told }), { now: NOW });
    expect(guessed.retired).toBe(0); // 14 images, 14 requests: the guess sees too short a future
    const lasting = evictContext(parse({ ...told, requests_left: 200 }), { now: NOW });
    expect(lasting.retired).toBe(14 - 3);
    expect(lasting.stats.image_blocks_after).toBe(3);
    expect(lasting.stats.reason).toBe("price"); // this request's move, judged over the horizon it was told
    const ending = evictContext(parse({ ...told, requests_left: 0 }), { now: NOW });
    expect(ending.retired).toBe(0);
    expect(
      EvictRequest.safeParse({ format: "anthropic", messages: [], requests_left: 10, session_id: "s" }).success,
    ).toBe(false); // hermes
    expect(EvictRequest.safeParse({ ...base, requests_left: 10 }).success).toBe(false); // no session_id
    expect(EvictRequest.safeParse({ ...base, session_id: "s", requests_left: -1 }).success).toBe(false);
    expect(EvictRequest.safeParse({ ...base, session_id: "s", requests_left: 2.5 }).success).toBe(false);
  });

  it("requests_left judges this request only: a horizon that changes never re-decides an earlier boundary or moves the front back", () => {
    // Told nothing up to 23 images, the price rule has moved the front; told "0 left" at the 24th
    // (a budget run out), the earlier moves stand: the front does not go back (here even unremembered).
    const before = evictContext(parse({ ...base, session_id: "late", messages: anthropicScreenshots(23, SMALL) }), {
      now: NOW,
    });
    expect(before.retired).toBeGreaterThan(0);
    const late = evictContext(
      parse({ ...base, session_id: "late", messages: anthropicScreenshots(24, SMALL), requests_left: 0 }),
      { now: NOW },
    );
    expect(late.retired).toBeGreaterThanOrEqual(before.retired);
    // Told 300 left at the 14th image (nothing moved before): one move now, labelled as this
    // request's, and the marker where the previous request's front was (before the oldest image).
    const now = evictContext(
      parse({
        ...base,
        session_id: "now",
        manage_cache: true,
        messages: anthropicScreenshots(14, SMALL),
        requests_left: 300,
      }),
      { now: NOW },
    );
    expect(now.retired).toBe(11);
    expect(now.stats.reason).toBe("price");
    const { carriers } = ANTHROPIC_MESSAGES.inventory(anthropicScreenshots(14, SMALL));
    expect(now.stats.cache_marker?.message).toBe(carriers[0]!.message - 1);
  });

  it("holds a front the session remembers, unless the conversation is not the one remembered", () => {
    const { carriers } = ANTHROPIC_MESSAGES.inventory(messages);
    const c = carriers[8]!;
    const memory = { at: NOW - 30_000, front: 9, carrier: `${c.message}/${c.block}/${c.bytes}` };
    const held = evictContext(parse({ ...base, session_id: "s1" }), { now: NOW, memory });
    expect(held.retired).toBe(9);
    expect(held.stats.reason).toBe("held");
    const other = evictContext(parse({ ...base, session_id: "s1" }), {
      now: NOW,
      memory: { ...memory, carrier: "3/0/1" },
    });
    expect(other.retired).toBe(0);
  });
});

describe("cost: the front breakpoint (manage_cache)", () => {
  it("stands on the last markable block before the front: never a thinking or image block, never in a plain-string message, at most 20 blocks back", () => {
    const text = (t: string) => ({ type: "text", text: t });
    const messages = [
      { role: "user", content: [text("task")] },
      {
        role: "assistant",
        content: [
          text("plan"),
          { type: "thinking", thinking: "…", signature: "s" },
          { type: "redacted_thinking", data: "x" },
          // Beta blocks that take no cache_control either (the SDK's BetaFallbackBlockParam,
          // BetaMCPToolListingBlockParam), and an empty text block, which the API refuses to mark.
          { type: "fallback" },
          { type: "mcp_tool_listing", server_name: "m", tools: [] },
          text(""),
        ],
      },
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
          { type: "tool_result", tool_use_id: "t", content: [] },
        ],
      },
    ];
    // Before the tool_result (message 2, block 1): the image, both thinking blocks, the beta blocks
    // and the empty text are passed over.
    expect(blockBefore(messages, { message: 2, block: 1 })).toEqual({ message: 1, block: 0 });
    // A plain-string message on the way: nothing can be marked without changing its bytes.
    expect(
      blockBefore([{ role: "user", content: "hello" }, ...messages.slice(2)], { message: 1, block: 0 }),
    ).toBeNull();
    // Only unmarkable blocks within 20: none.
    const thinking = Array.from({ length: 20 }, () => ({ type: "thinking", thinking: "…", signature: "s" }));
    expect(
      blockBefore([{ role: "assistant", content: [text("far"), ...thinking, text("front")] }], {
        message: 0,
        block: 21,
      }),
    ).toBeNull();
    expect(
      blockBefore([{ role: "assistant", content: [text("near"), ...thinking.slice(1), text("front")] }], {
        message: 0,
        block: 20,
      }),
    ).toEqual({ message: 0, block: 0 });
  });

  it("puts one cache_control on the block just before the front and reports it; the client's stay where they were", () => {
    const client = withClientMarkers(anthropicScreenshots(30, SMALL), 2);
    const out = evictContext(
      parse({ format: "anthropic", strategy: "cost", provider: "anthropic", manage_cache: true, messages: client }),
      { now: NOW },
    );
    const before = markers(client);
    const after = markers(out.messages);
    for (const m of before) expect(after).toContain(m);
    expect(after).toHaveLength(before.length + 1);
    const at = out.stats.cache_marker!;
    expect(after).toContain(`${at.message}/${at.block}`);
    // Just before the oldest tool image the previous request still had: the front did not move in
    // this request, so that is the oldest live one, after the assistant's tool_use block.
    expect(out.stats.reason).not.toBe("under_ceiling");
    expect(out.stats.explanation).toContain("at an earlier message");
    const oldestLive = ANTHROPIC_MESSAGES.inventory(client).carriers[out.retired]!;
    expect(at).toEqual({ message: oldestLive.message - 1, block: 1 });
  });

  it("marks the next front before any image is retired: just before the oldest tool image, client markers untouched, at most 4", () => {
    const client = withClientMarkers(anthropicScreenshots(12, SMALL), 2);
    const out = evictContext(
      parse({ format: "anthropic", strategy: "cost", provider: "anthropic", manage_cache: true, messages: client }),
      { now: NOW },
    );
    expect(out.retired).toBe(0);
    expect(out.stats.reason).toBe("under_ceiling");
    const before = markers(client);
    const after = markers(out.messages);
    for (const m of before) expect(after).toContain(m);
    expect(after).toHaveLength(before.length + 1);
    expect(countBreakpoints(out.messages).count + 1).toBeLessThanOrEqual(4);
    // The first retirement will start at the oldest tool image: the marker stands on the block before it.
    const oldest = ANTHROPIC_MESSAGES.inventory(client).carriers[0]!;
    expect(out.stats.cache_marker).toEqual({ message: oldest.message - 1, block: 1 });
    // Only the marker changed: every message but the marked one is as the client sent it.
    out.messages.forEach((m, i) => {
      if (i !== oldest.message - 1) expect(m).toEqual(client[i]);
    });
  });

  it("places nothing when the client already uses the 4 breakpoints, and says so", () => {
    const client = withClientMarkers(anthropicScreenshots(30, SMALL), 3);
    const out = evictContext(
      parse({ format: "anthropic", strategy: "cost", provider: "anthropic", manage_cache: true, messages: client }),
      { now: NOW },
    );
    expect(out.stats.cache_marker).toBeUndefined();
    expect(out.stats.cache_marker_note).toMatch(/4 breakpoints/);
    expect(markers(out.messages)).toEqual(markers(client));
  });

  it("property: never moves a client breakpoint, adds at most one, never exceeds 4, never rewrites an upload", () => {
    const script = fc.record({
      shots: fc.integer({ min: 0, max: 60 }),
      clientMarkers: fc.integer({ min: 0, max: 3 }),
      others: fc.integer({ min: 0, max: 2 }),
      uploadAt: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
      large: fc.boolean(),
    });
    fc.assert(
      fc.property(script, ({ shots, clientMarkers, others, uploadAt, large }) => {
        let messages = anthropicScreenshots(shots, large ? { width: 2_400, height: 1_000 } : SMALL);
        if (uploadAt !== undefined) {
          const at = Math.min(messages.length, uploadAt * 2 + 1);
          const upload = {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: pngBase64(800, 600) } },
            ],
          };
          messages = [...messages.slice(0, at), upload as Record<string, unknown>, ...messages.slice(at)];
        }
        messages = deepFreeze(withClientMarkers(messages, clientMarkers));
        const out = evictContext(
          parse({
            format: "anthropic",
            strategy: "cost",
            provider: "anthropic",
            manage_cache: true,
            other_breakpoints: others,
            messages,
          }),
          { now: NOW },
        );
        const before = markers(messages);
        const after = markers(out.messages);
        for (const m of before) expect(after).toContain(m);
        expect(after.length - before.length).toBeLessThanOrEqual(1);
        expect(countBreakpoints(out.messages).count + others).toBeLessThanOrEqual(Math.max(4, before.length + others));
        if (before.length + others < 4) expect(countBreakpoints(out.messages).count + others).toBeLessThanOrEqual(4);
        const uploads = ANTHROPIC_MESSAGES.inventory(messages).uploads;
        const blockAt = (list: readonly unknown[], u: { message: number; block: number }) =>
          (list[u.message] as { content: unknown[] }).content[u.block];
        for (const u of uploads) expect(blockAt(out.messages, u)).toBe(blockAt(messages, u));
        expect(loadOf(ANTHROPIC_MESSAGES.inventory(out.messages).uploads)).toEqual(loadOf(uploads));
        if (out.stats.fits) expect(out.stats.image_blocks_after).toBeLessThanOrEqual(out.stats.limits.max_blocks);
      }),
      { numRuns: 150 },
    );
  });
});

describe("retired images can become their description", () => {
  it.each(FORMATS)(
    "%s: a mapped image becomes its vision_analyze text, the others the fixed placeholder, the same bytes every time",
    (format) => {
      const messages = conversation(format, screenshots(21));
      const first = evictContext(parse({ format, messages }));
      const target = first.evicted[2]!;
      const descriptions = [
        {
          message: target.message,
          block: target.block,
          ...(target.part === undefined ? {} : { part: target.part }),
          text: "a login form with an email field",
        },
      ];
      const a = evictContext(parse({ format, messages, descriptions }));
      const b = evictContext(parse({ format, messages, descriptions }));
      expect(JSON.stringify(a.messages)).toBe(JSON.stringify(b.messages));
      const text = JSON.stringify(a.messages[target.message]);
      expect(text).toContain(JSON.stringify(describedImageText("a login form with an email field")).slice(1, -1));
      expect(JSON.stringify(a.messages[first.evicted[0]!.message])).toContain(RETIRED_IMAGE_TEXT);
      expect(a.retired).toBe(first.retired);
    },
  );

  it("refuses a description for a message that is not there", () => {
    expect(
      EvictRequest.safeParse({ format: "openai", messages: [], descriptions: [{ message: 0, block: 0, text: "x" }] })
        .success,
    ).toBe(false);
  });
});

describe("cost: each model's own rules (the model table)", () => {
  it("takes the model's image ceiling: 600 on a 1M-context model, 100 on a 200k one, 20 when an image passes 2,000 px", () => {
    const messages = anthropicScreenshots(150, SMALL);
    const run = (model: string | undefined, msgs = messages) =>
      evictContext(
        parse({
          format: "anthropic",
          strategy: "cost",
          provider: "anthropic",
          ...(model ? { model } : {}),
          messages: msgs,
        }),
        { now: NOW },
      );
    const wide = run("claude-sonnet-5-5");
    expect(wide.stats.limits.max_blocks).toBe(600);
    expect(wide.stats.estimate?.model).toBe("claude-sonnet-5-5");
    expect(run("claude-haiku-4-5").stats.limits.max_blocks).toBe(100);
    expect(run("claude-haiku-4-5").stats.image_blocks_after).toBeLessThanOrEqual(100);
    expect(
      run("claude-sonnet-5-5", anthropicScreenshots(30, { width: 2_400, height: 1_600 })).stats.limits.max_blocks,
    ).toBe(20);
  });

  it("judges cold by the model's TTL: the client's 1-hour cache_control keeps a 10-minute pause warm; a 5-minute one does not", () => {
    const messages = anthropicScreenshots(12, SMALL);
    const pause = new Date(NOW - 10 * 60_000).toISOString();
    const short = evictContext(
      parse({ format: "anthropic", strategy: "cost", session_id: "s", messages, last_request_at: pause }),
      { now: NOW },
    );
    expect(short.stats.reason).toBe("cold_cache");
    expect(short.stats.explanation).toBe(
      "Retired 9 tool images because the cache was cold: nothing cached is rewritten.",
    );
    const long = evictContext(
      parse({
        format: "anthropic",
        strategy: "cost",
        session_id: "s",
        messages,
        last_request_at: pause,
        cache_control: { type: "ephemeral", ttl: "1h" },
      }),
      { now: NOW },
    );
    expect(long.stats.cold_cache).toBe(false);
    expect(long.retired).toBe(0);
  });

  it("a top-level cache_control (automatic caching) counts toward the 4 breakpoints", () => {
    const client = withClientMarkers(anthropicScreenshots(30, SMALL), 2);
    const body = {
      format: "anthropic",
      strategy: "cost",
      provider: "anthropic",
      manage_cache: true,
      messages: client,
      other_breakpoints: 1,
    } as const;
    expect(evictContext(parse(body), { now: NOW }).stats.cache_marker).toBeDefined();
    const automatic = evictContext(parse({ ...body, cache_control: { type: "ephemeral" } }), { now: NOW });
    expect(automatic.stats.cache_marker).toBeUndefined();
    expect(automatic.stats.cache_marker_note).toMatch(/4 of the 4 breakpoints.*1 automatic/);
  });

  it("OpenAI from GPT-5.6: the front marker is an explicit prompt_cache_breakpoint on the part before the front; before GPT-5.6 nothing is placed", () => {
    const messages = conversation("openai", screenshots(30));
    const out = evictContext(
      parse({
        format: "openai",
        strategy: "cost",
        provider: "openai",
        model: "gpt-5.6-terra",
        manage_cache: true,
        messages,
      }),
      { now: NOW },
    );
    const at = out.stats.cache_marker!;
    const part = (out.messages[at.message] as { content: Record<string, unknown>[] }).content[at.block]!;
    expect(part.prompt_cache_breakpoint).toEqual({ mode: "explicit" });
    expect(JSON.stringify(out.messages).split("prompt_cache_breakpoint").length - 1).toBe(1);
    // Writes are billed at 1.25x on this model: the estimate prices them so.
    expect(out.stats.estimate!.cache_write_usd).toBeCloseTo(
      (out.stats.estimate!.cache_write_tokens * 2.5 * 1.25) / 1e6,
      5,
    );
    const older = evictContext(
      parse({ format: "openai", strategy: "cost", provider: "openai", model: "gpt-4o", manage_cache: true, messages }),
      { now: NOW },
    );
    expect(older.stats.cache_marker).toBeUndefined();
    expect(JSON.stringify(older.messages)).not.toContain("prompt_cache_breakpoint");
  });

  it("says what it did in words and numbers: under hermes the same request would retire 8 and rewrite everything after the first image", () => {
    const messages = anthropicScreenshots(21, { width: 2_400, height: 1_600 });
    const out = evictContext(parse({ format: "anthropic", strategy: "cost", session_id: "s", messages }), {
      now: NOW,
      memory: { at: NOW - 30_000, front: 0, carrier: "" },
    });
    expect(out.stats.reason).toBe("ceiling");
    expect(out.stats.explanation).toMatch(
      /^Retired 18 tool images because the request would pass the ceiling of 20 images: about [\d,]+ tokens after the front are written to the cache again\.$/,
    );
    expect(out.stats.estimate!.hermes.retired).toBe(8);
    expect(out.stats.estimate!.hermes.cache_write_tokens).toBeGreaterThan(0);
    expect(out.stats.estimate!.cache_write_usd).toBeCloseTo(
      (out.stats.estimate!.cache_write_tokens * 3 * 1.25) / 1e6,
      5,
    );
  });
});
