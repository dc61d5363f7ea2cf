/** The replay model: the cache models, the policies, generated and JSONL sessions, validation. */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { economicBatch } from "../../shared/eviction/cost";
import { DEFAULT_LIMITS } from "../../shared/eviction/policy";
import {
  agentBreakpoints,
  ANTHROPIC_1H_PRICES,
  ANTHROPIC_CACHE_MODEL,
  applyPolicy,
  commonPrefixTokens,
  DEFAULT_CACHE_MODEL,
  DEFAULT_PRICES,
  OPENAI_CACHE_MODEL,
  OPENAI_PRICES,
  type CacheModel,
  type ReplayRequest,
  type Segment,
} from "../../cli/replay/cache.models";
import { compare, costLimits, costLosses, costOptions, replay } from "../../cli/replay/compare";
import { parseSessionLine, parseUsage, validate, type SessionLine } from "../../cli/replay/jsonl";
import { batchedPolicy, bodyFromSegments, costPolicy, keepNewest, noEviction } from "../../cli/replay/rivals";
import {
  generateSession,
  imagesIn,
  RANDOM_SESSION_RANGES,
  randomSessions,
  requestsFromTurns,
  requestTimes,
} from "../../cli/replay/sessions";
import { ANTHROPIC_MESSAGES } from "../../shared/llm/anthropic.messages";
import { conversationSteps } from "../../shared/eviction/steps";
import { textTokens } from "../../shared/llm/estimate";
import { conversation, FORMATS, screenshots } from "./eviction.fixtures";

const text = (id: string, tokens: number, message = 0): Segment => ({ id, tokens, message });
const shot = (id: string, tokens: number, message: number): Segment => ({
  id,
  tokens,
  message,
  image: { kind: "tool", carrier: id, bytes: 100 },
});

describe("cache model", () => {
  it("reads the longest unchanged prefix and writes the rest", () => {
    const a = [text("sys", 100), text("t1", 50, 1)];
    const b = [...a, shot("i2", 30, 2)];
    const c = [text("sys", 100), text("t1-edited", 50, 1), shot("i2", 30, 2), text("t3", 20, 3)];
    expect(commonPrefixTokens(a, b)).toBe(150);
    expect(commonPrefixTokens(b, c)).toBe(100);

    const report = replay([a, b, c], keepNewest(3));
    expect(report.perRequest.map((r) => [r.cacheReadTokens, r.cacheWriteTokens, r.evictionWriteTokens])).toEqual([
      [0, 150, 0],
      [150, 30, 0],
      [100, 100, 80], // t1 and i2 stood where request 2 stood but had to be written again
    ]);
    expect(report.cache_write_tokens).toBe(280);
    expect(report.eviction_write_share).toBeCloseTo(80 / 280, 10);
    expect(report.worst_request).toBe(0);
    expect(report.collapses).toBe(1);
  });

  it("counts reads in whole units of the granularity", () => {
    const a = [text("sys", 1000), text("t1", 500, 1)];
    const b = [...a, text("t2", 700, 2)];
    const report = replay([a, b], keepNewest(3), { model: { ...DEFAULT_CACHE_MODEL, granularity: 256 } });
    expect(report.perRequest[1]).toMatchObject({
      cacheReadTokens: 1280,
      cacheWriteTokens: 920,
      evictionWriteTokens: 0,
    });
  });

  it("prices writes at 1.25x and reads at 0.1x of input by default", () => {
    const a = [text("sys", 1_000_000)];
    const report = replay([a, a], keepNewest(3));
    expect(report.cost).toBeCloseTo(3 * 1.25 + 3 * 0.1, 6);
  });
});

describe("generated sessions", () => {
  it("places one screenshot per turn from turn 2, or every k turns, until the count is reached", () => {
    const dense = generateSession({ turns: 10, images: 4 });
    expect(dense.map((t) => t.images.length)).toEqual([0, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
    const spaced = generateSession({ turns: 10, images: 60, imageEvery: 3 });
    expect(spaced.map((t) => t.images.length)).toEqual([0, 1, 0, 0, 1, 0, 0, 1, 0, 0]);
    expect(imagesIn(spaced)).toBe(3);
  });

  it("light session (12 screenshots, 40 turns): batched never collapses, keep-3 collapses on every new image", () => {
    const requests = requestsFromTurns(generateSession({ turns: 40, images: 12 }), 4_000);
    const { keep3, batched } = compare(requests);
    expect(batched.eviction_write_tokens).toBe(0);
    expect(batched.collapses).toBe(0);
    expect(keep3.collapses).toBe(9); // screenshots 4..12
    // Each collapse rewrites the placeholder plus the two newer turns (text 1,000 + image 1,500).
    expect(keep3.worst_request_eviction_write_tokens).toBe(10 + 2 * 2_500);
    expect(keep3.eviction_write_tokens).toBe(9 * 5_010);
  });

  it("heavy session (60 screenshots, 80 turns): batched collapses once per batch, with a larger worst request", () => {
    const requests = requestsFromTurns(generateSession({ turns: 80, images: 60 }), 4_000);
    const { keep3, batched, none } = compare(requests);
    expect(keep3.collapses).toBe(57);
    expect(batched.collapses).toBe(5); // screenshots 21, 29, 37, 45, 53
    expect(batched.worst_request).toBe(21); // request 22 carries the 21st screenshot
    expect(batched.worst_request_write_tokens).toBeGreaterThan(4 * keep3.worst_request_write_tokens);
    expect(batched.max_image_blocks).toBe(20);
    expect(batched.requests_over_ceiling).toBe(0);
    expect(none.requests_over_ceiling).toBe(80 - 21);
    expect(keep3.eviction_write_share).toBeGreaterThan(batched.eviction_write_share);
    expect(batched.eviction_write_share).toBeGreaterThan(0.3);
  });

  it("uses the policy module: the batched replay retires what retirementFront says", () => {
    const requests = requestsFromTurns(generateSession({ turns: 30, images: 29 }), 100);
    const policy = batchedPolicy();
    const at = { index: 0, at: 0, count: 1 };
    expect(policy(requests[20]!, at).retired.size).toBe(0); // 20 screenshots
    expect([...policy(requests[21]!, at).retired]).toEqual([
      "turn2",
      "turn3",
      "turn4",
      "turn5",
      "turn6",
      "turn7",
      "turn8",
      "turn9",
    ]);
    expect(policy(requests[29]!, at).retired.size).toBe(16); // 29 screenshots
    expect(
      batchedPolicy({ maxBlocks: 10, maxBytes: 24_000_000, batch: 4, floor: 3 })(requests[11]!, at).retired.size,
    ).toBe(4);
  });

  it("property: a session that never passes the ceiling pays no eviction writes under the batched policy", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 1, max: 3_000 }),
        (turns, images, imageEvery, textTokens, imageTokens) => {
          const requests = requestsFromTurns(
            generateSession({ turns, images, imageEvery, textTokens, imageTokens }),
            500,
          );
          const { batched, keep3 } = compare(requests);
          expect(batched.eviction_write_tokens).toBe(0);
          expect(keep3.collapses).toBe(Math.max(0, imagesIn(generateSession({ turns, images, imageEvery })) - 3));
        },
      ),
    );
  });
});

describe("session files", () => {
  const body = { imageTokens: 1_500, charsPerToken: 4 };
  const image = { tokens: 1_500, bytes: 350_000 };

  it("parses compact turns", () => {
    expect(parseSessionLine('{"text_tokens": 800, "images": 2}', "anthropic", body, image)).toEqual({
      kind: "turn",
      turn: { textTokens: 800, images: [image, image] },
    });
    const custom = parseSessionLine(
      '{"text_tokens": 5, "images": [{"tokens": 9, "upload": true}]}',
      "openai",
      body,
      image,
    );
    expect(custom).toEqual({
      kind: "turn",
      turn: { textTokens: 5, images: [{ tokens: 9, bytes: 350_000, upload: true }] },
    });
    expect(() => parseSessionLine('{"text_tokens": -1}', "openai", body, image)).toThrow(/text_tokens/);
  });

  it.each(FORMATS)("replays %s request bodies through the same adapters", (format) => {
    // The session a client would log: one request per screenshot, history included.
    const lines = Array.from({ length: 25 }, (_, i) =>
      JSON.stringify({ format, system: "you are an agent", messages: conversation(format, screenshots(i + 1)) }),
    );
    const requests: ReplayRequest[] = lines.map((line) => {
      const parsed = parseSessionLine(line, "anthropic", body, image);
      if (parsed.kind !== "request") throw new Error("expected a request line");
      return parsed.segments;
    });
    expect(requests[24]!.filter((s) => s.image?.kind === "tool")).toHaveLength(25);
    const { keep3, batched, none } = compare(requests);
    expect(none.eviction_write_tokens).toBe(0); // an append-only log reads its whole prefix back
    expect(batched.collapses).toBe(1); // the 21st screenshot moves the front by 8
    expect(keep3.collapses).toBe(22); // screenshots 4..25
    expect(batched.max_image_blocks).toBe(20);
  });
});

describe("cost strategy inputs", () => {
  it("one builder: a generated request becomes the body the route receives, and the route's steps count its tokens and answered requests", () => {
    // 25 screenshots as a client logs them: assistant tool_use + user tool_result per turn (50 messages).
    const messages = conversation("anthropic", screenshots(25));
    const { steps } = conversationSteps(ANTHROPIC_MESSAGES, messages, ANTHROPIC_MESSAGES.inventory(messages));
    expect(steps).toHaveLength(50);
    expect(steps[steps.length - 1]!.turns).toBe(25);
    expect(steps[1]!.turns).toBe(1); // the first tool_result follows the first assistant message
    // A compact turn stands for one answered request: an assistant message, then its tool result.
    const request = requestsFromTurns(generateSession({ turns: 10, images: 4 }), 1_000)[9]!;
    const view = bodyFromSegments(request);
    const built = conversationSteps(
      ANTHROPIC_MESSAGES,
      view.messages,
      ANTHROPIC_MESSAGES.inventory(view.messages),
      textTokens(view.system),
    );
    expect(
      built.steps
        .filter((_, i) => view.messages[i] && (view.messages[i] as { role: string }).role === "assistant")
        .map((step) => step.turns),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // The route reads every text and image as many tokens as the segment says: the prompts agree.
    expect(built.steps[built.steps.length - 1]!.end).toBe(request.reduce((n, s) => n + s.tokens, 0));
    expect(view.carrierIds).toEqual(["turn2", "turn3", "turn4", "turn5"]);
  });

  it("the economic batch: the square-root rule of reads against the rewrite each collapse costs", () => {
    const prices = { writeMultiplier: 1.25, readMultiplier: 0.1 };
    // 1,500 image tokens a request, a 7,500-token window: sqrt(2 * 1.15 * 7,500 * 1,500 / 0.1).
    expect(economicBatch(prices, 1_500, 7_500)).toBeCloseTo(Math.sqrt(258_750_000), 6);
    // Cycles of that batch cost less per request than half or double of it.
    const perRequest = (batch: number) => {
      const cycle = batch / 1_500;
      return (1.15 * 7_500) / cycle + (0.1 * 1_500 * cycle) / 2;
    };
    const best = economicBatch(prices, 1_500, 7_500);
    expect(perRequest(best)).toBeLessThan(perRequest(best / 2));
    expect(perRequest(best)).toBeLessThan(perRequest(best * 2));
    expect(economicBatch(prices, 0, 7_500)).toBe(Infinity);
  });
});

describe("faithful cache models", () => {
  const anthropic = { ...ANTHROPIC_CACHE_MODEL, breakpoints: "session" as const };
  /** A request of `n` text blocks of `tokens` each, breakpoints at the given indices. */
  const blocks = (n: number, tokens: number, marks: number[], prefix = "b"): Segment[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `${prefix}${i}`,
      tokens,
      message: i,
      ...(marks.includes(i) ? { breakpoint: true } : {}),
    }));
  const run = (requests: ReplayRequest[], times: number[], model: CacheModel = anthropic, prices = DEFAULT_PRICES) =>
    replay(requests, noEviction, { model, times, prices }).perRequest;

  it("anthropic: reads an entry 20 blocks before a breakpoint, not one 21 blocks back", () => {
    const big = (marks: number[]) => blocks(30, 200, marks);
    // Entry written at block 5; the next request's only breakpoint is 20 (or 21) blocks later.
    const [, at20] = run([big([5]), big([25])], [0, 1_000]);
    expect(at20!.cacheReadTokens).toBe(6 * 200);
    const [, at21] = run([big([5]), big([26])], [0, 1_000]);
    expect(at21!.cacheReadTokens).toBe(0);
    expect(at21!.cacheWriteTokens).toBe(27 * 200);
  });

  it("anthropic: an entry expires 5 idle minutes after its last use, and each read renews it", () => {
    const r = blocks(10, 200, [9]);
    const fresh = run([r, r], [0, 5 * 60_000]);
    expect(fresh[1]!.cacheReadTokens).toBe(2_000);
    const expired = run([r, r], [0, 5 * 60_000 + 1]);
    expect(expired[1]).toMatchObject({
      cacheReadTokens: 0,
      cacheWriteTokens: 2_000,
      cold: true,
      evictionWriteTokens: 0,
    });
    // Read at 4 min renews the entry: still there at 8 min.
    const renewed = run([r, r, r], [0, 4 * 60_000, 8 * 60_000]);
    expect(renewed[2]!.cacheReadTokens).toBe(2_000);
    // The 1-hour TTL is an option, with its 2x write price.
    const hour = run([r, r], [0, 30 * 60_000], { ...anthropic, ttlMs: 60 * 60_000 }, ANTHROPIC_1H_PRICES);
    expect(hour[1]!.cacheReadTokens).toBe(2_000);
    expect(hour[0]!.cost).toBeCloseTo((2_000 * 2 * 3) / 1e6, 9);
  });

  it("anthropic: a prefix under the minimum is not cached; what follows the last breakpoint is uncached input", () => {
    const small = run([blocks(4, 200, [3])], [0]); // 800 tokens < 1,024
    expect(small[0]).toMatchObject({ cacheWriteTokens: 0, cacheReadTokens: 0, uncachedTokens: 800 });
    const tail = run([blocks(10, 200, [5])], [0]);
    expect(tail[0]).toMatchObject({ cacheWriteTokens: 1_200, uncachedTokens: 800 });
    expect(tail[0]!.cost).toBeCloseTo(((1_200 * 1.25 + 800) * 3) / 1e6, 9);
    const haiku = run([blocks(10, 200, [5])], [0], { ...anthropic, minCacheableTokens: 2_048 });
    expect(haiku[0]!.cacheWriteTokens).toBe(0);
  });

  it("anthropic system_and_3: retiring an image deep in the history re-writes everything after the last entry before it", () => {
    const requests = requestsFromTurns(generateSession({ turns: 30, images: 25 }), 4_000);
    const report = replay(requests, keepNewest(3), { model: ANTHROPIC_CACHE_MODEL });
    // Request 5 carries the 4th screenshot: keep-3 retires the first (turn 2). What is read back is
    // the system prompt and turn 1, an entry request 3 wrote within 20 blocks of a breakpoint.
    expect(report.perRequest[4]).toMatchObject({ cacheReadTokens: 5_000 });
    expect(report.perRequest[4]!.cacheWriteTokens).toBe(report.perRequest[4]!.inputTokens - 5_000);
    // Later, that entry has expired or fallen out of the lookback: the read stops at the system prompt.
    expect(report.perRequest[20]).toMatchObject({ cacheReadTokens: 4_000 });
    expect(report.requests_over_breakpoints).toBe(0);
    expect(agentBreakpoints(requests[10]!, "system_and_3")).toHaveLength(4);
    expect(agentBreakpoints(requests[10]!, "rolling")).toEqual([requests[10]!.length - 1]);
  });

  it("openai: automatic prefix caching from 1,024 tokens in 128-token steps, no write premium, idle expiry", () => {
    const a = blocks(6, 300, []);
    const b = [...a, ...blocks(2, 300, [], "c")];
    const [, second] = run([a, b], [0, 1_000], OPENAI_CACHE_MODEL, OPENAI_PRICES);
    expect(second!.cacheReadTokens).toBe(1_024 + 6 * 128); // 1,800 shared tokens, in steps
    expect(second!.cost).toBeCloseTo(((1_792 * 0.5 + (2_400 - 1_792)) * 2.5) / 1e6, 9);
    const [, short] = run([blocks(3, 300, []), blocks(3, 300, [])], [0, 1_000], OPENAI_CACHE_MODEL, OPENAI_PRICES);
    expect(short!.cacheReadTokens).toBe(0); // 900 tokens: under the minimum
    const [, idle] = run([a, b], [0, 10 * 60_000], OPENAI_CACHE_MODEL, OPENAI_PRICES);
    expect(idle!.cacheReadTokens).toBe(0);
  });

  it("request times: think time per turn, plus optional pauses", () => {
    expect(requestTimes(4, { thinkSeconds: 30, pauseEvery: 2, pauseMinutes: 8 })).toEqual([
      0, 30_000, 540_000, 570_000,
    ]);
    expect(requestTimes(3)).toEqual([0, 30_000, 60_000]);
  });
});

/** The random sessions of the cost properties: the ranges `npm run replay -- --random` draws from. */
const range = (key: keyof typeof RANDOM_SESSION_RANGES) =>
  fc.integer({ min: RANDOM_SESSION_RANGES[key][0], max: RANDOM_SESSION_RANGES[key][1] });
const randomSession = fc.record({
  turns: range("turns"),
  images: range("images"),
  imageEvery: range("imageEvery"),
  textTokens: range("textTokens"),
  imageTokens: range("imageTokens"),
  systemTokens: range("systemTokens"),
  thinkSeconds: range("thinkSeconds"),
  pauseEvery: fc.oneof(fc.constant(0), range("pauseEvery")),
  pauseMinutes: range("pauseMinutes"),
});

/**
 * Sessions whose images stop just past the default ceiling and that end soon after `cost` moved
 * alone (seen by the properties below before `cost` followed Hermes's ledger).
 */
const LATE_MOVES = [
  {
    turns: 37,
    images: 21,
    imageEvery: 1,
    textTokens: 924,
    imageTokens: 1265,
    systemTokens: 500,
    thinkSeconds: 5,
    pauseEvery: 0,
    pauseMinutes: 1,
  },
  {
    turns: 85,
    images: 26,
    imageEvery: 2,
    textTokens: 1566,
    imageTokens: 1854,
    systemTokens: 1286,
    thinkSeconds: 119,
    pauseEvery: 0,
    pauseMinutes: 1,
  },
  {
    turns: 52,
    images: 21,
    imageEvery: 1,
    textTokens: 1181,
    imageTokens: 1590,
    systemTokens: 4690,
    thinkSeconds: 39,
    pauseEvery: 0,
    pauseMinutes: 17,
  },
];

describe("the target sessions, faithful model (the numbers docs/eviction.md reports)", () => {
  const session = (shape: { turns: number; images: number; imageEvery?: number }, pauseEvery = 0) => {
    const requests = requestsFromTurns(generateSession(shape), 4_000);
    return compare(requests, {
      model: ANTHROPIC_CACHE_MODEL,
      times: requestTimes(requests.length, { pauseEvery, pauseMinutes: 8 }),
    });
  };

  it("light session (12 screenshots, 40 turns): batched and cost pay no eviction writes; keep-3 about the measured 62 %", () => {
    const r = session({ turns: 40, images: 12 });
    expect(r.batched.eviction_write_tokens).toBe(0);
    expect(r.cost.eviction_write_tokens).toBe(0);
    expect(r.keep3.eviction_write_share).toBeGreaterThan(0.55);
    expect(r.keep3.eviction_write_share).toBeLessThan(0.65);
  });

  it.each([
    ["60 in 80 turns", { turns: 80, images: 60 }],
    ["36 in 50 turns", { turns: 50, images: 36 }],
    ["every 3rd turn over 90", { turns: 90, images: 90, imageEvery: 3 }],
  ] as const)(
    "heavy %s, with and without pauses: cost beats keep-3 and Hermes (by 20 % when told the length), its worst request no larger",
    (_name, shape) => {
      for (const pauseEvery of [0, 15]) {
        const r = session(shape, pauseEvery);
        // Told nothing: at least 15 % (20 % with pauses); told the session's length: 20 % everywhere.
        for (const [report, share] of [
          [r.cost, pauseEvery > 0 ? 0.8 : 0.85],
          [r.cost_known, 0.8],
        ] as const) {
          expect(report.cost).toBeLessThan(0.8 * r.keep3.cost);
          expect(report.cost).toBeLessThan(share * r.batched.cost);
          expect(report.worst_request_write_tokens).toBeLessThanOrEqual(r.batched.worst_request_write_tokens);
          expect(report.requests_over_ceiling).toBe(0);
          expect(report.requests_over_breakpoints).toBe(0);
        }
      }
    },
  );

  it("the targets against every rival (keep-3, Hermes 20/8/3 and 100/8/3, context editing, Claude Code) on the suite: met everywhere but the two docs/eviction.md names", () => {
    const rivals = [
      "keep3",
      "batched",
      "raised",
      "context_editing",
      "context_editing_clear_at_least",
      "claude_code",
    ] as const;
    const missed: string[] = [];
    for (const [name, shape, heavy] of [
      ["light 12/40", { turns: 40, images: 12 }, false],
      ["heavy 60/80", { turns: 80, images: 60 }, true],
      ["heavy 36/50", { turns: 50, images: 36 }, true],
      ["heavy every 3rd/90", { turns: 90, images: 90, imageEvery: 3 }, true],
    ] as const) {
      for (const pauseEvery of [0, 15]) {
        const r = session(shape, pauseEvery);
        const label = `${name}${pauseEvery ? " paused" : ""}`;
        const cheapest = Math.min(...rivals.map((k) => r[k].cost));
        // Everywhere: no more than the cheapest rival + 2 %, no worse worst request than the rivals' largest.
        expect(r.cost.cost, label).toBeLessThanOrEqual(cheapest * 1.02);
        expect(r.cost.worst_request_write_tokens, label).toBeLessThanOrEqual(
          Math.max(...rivals.map((k) => r[k].worst_request_write_tokens)),
        );
        if (!heavy) continue;
        for (const k of ["keep3", "batched", "context_editing"] as const)
          if (r.cost.cost > 0.8 * r[k].cost) missed.push(`${label}: ${k}`);
        // Told the length: below every rival, Hermes 100/8/3 included.
        expect(r.cost_known.cost, label).toBeLessThan(cheapest);
      }
    }
    expect(missed).toEqual(["heavy 36/50: context_editing", "heavy every 3rd/90: batched"]);
  });

  it("60 in 80 turns: cost is at least 20 % cheaper than Hermes 20/8/3 with and without pauses", () => {
    for (const pauseEvery of [0, 15]) {
      const r = session({ turns: 80, images: 60 }, pauseEvery);
      expect(r.cost.cost).toBeLessThan(0.8 * r.batched.cost);
    }
  });

  it("36 in 50 turns: cost is at least 20 % cheaper than keep-3 and Hermes 20/8/3 with and without pauses", () => {
    for (const pauseEvery of [0, 15]) {
      const r = session({ turns: 50, images: 36 }, pauseEvery);
      expect(r.cost.cost).toBeLessThan(0.8 * r.batched.cost);
      expect(r.cost.cost).toBeLessThan(0.8 * r.keep3.cost);
    }
  });

  it("told the session's length (requests_left), cost reaches 20 % on the session its guess cannot, and still pays nothing on the light one", () => {
    // The session its guess cannot reach: every 3rd turn over 90, no pauses (-18 % without the length).
    const third = session({ turns: 90, images: 90, imageEvery: 3 });
    expect(third.cost.cost).toBeGreaterThan(0.8 * third.batched.cost);
    expect(third.cost_known.cost).toBeLessThan(0.8 * third.batched.cost);
    // Light session: told it will end at turn 40, cost still pays no eviction write.
    expect(session({ turns: 40, images: 12 }).cost_known.eviction_write_tokens).toBe(0);
  });

  it("an over-estimated requests_left (an iteration budget of 90 the session ends before) keeps the targets of these sessions", () => {
    for (const shape of [
      { turns: 40, images: 12 },
      { turns: 80, images: 60 },
      { turns: 50, images: 36 },
    ]) {
      const requests = requestsFromTurns(generateSession(shape), 4_000);
      const times = requestTimes(requests.length, {});
      const budget = compare(requests, { model: ANTHROPIC_CACHE_MODEL, times, horizon: 90 });
      expect(budget.cost.cost).toBeLessThanOrEqual(budget.batched.cost);
      if (shape.images <= 20) expect(budget.cost.eviction_write_tokens).toBe(0);
      else expect(budget.cost.cost).toBeLessThan(0.8 * budget.batched.cost);
    }
  });

  it("the front marker stands before the oldest tool image before anything is retired: the first collapse re-reads up to it", () => {
    const requests = requestsFromTurns(generateSession({ turns: 50, images: 36 }), 4_000);
    const limits = { ...DEFAULT_LIMITS, maxBlocks: 100 };
    const managed = replay(requests, costPolicy({}), { model: ANTHROPIC_CACHE_MODEL, limits });
    const unmanaged = replay(requests, costPolicy({ manageCache: false }), { model: ANTHROPIC_CACHE_MODEL, limits });
    const first = (r: typeof managed) => r.perRequest.find((q) => q.evictionWriteTokens > 0)!;
    // System (4,000) + turn 1 (1,000) + turn 2's text (1,000): everything before the first image is read back.
    expect(first(managed).cacheReadTokens).toBe(6_000);
    // Without the marker only the system prompt's entry is within reach.
    expect(first(unmanaged).cacheReadTokens).toBe(4_000);
    expect(managed.perRequest.every((q) => q.breakpoints <= 4)).toBe(true);
    expect(managed.requests_over_breakpoints).toBe(0);
  });

  it("after the default ceiling has forced Hermes to collapse, cost may move again under it when the price pays (36 in 50)", () => {
    const requests = requestsFromTurns(generateSession({ turns: 50, images: 36 }), 4_000);
    const policy = costPolicy({});
    const rules = requests.map(
      (request, index) => policy(request, { index, at: index * 30_000, count: requests.length }).rule,
    );
    // The first move when the 21st screenshot arrives, then price moves with at most 20 images live.
    expect(rules.indexOf("price")).toBe(21);
    expect(rules.filter((rule) => rule === "price").length).toBeGreaterThanOrEqual(2);
  });

  it("property: over random sessions cost (told nothing, and told the length) never passes the ceiling, ends at most 5 % above Hermes in at least 99 % (never 10 %), and no more in at least 95 %", () => {
    let runs = 0;
    const losses = { cost: 0, cost_known: 0 };
    const over = { cost: 0, cost_known: 0 };
    fc.assert(
      fc.property(randomSession, (s) => {
        const requests = requestsFromTurns(generateSession(s), s.systemTokens);
        const r = compare(requests, { model: ANTHROPIC_CACHE_MODEL, times: requestTimes(requests.length, s) });
        runs += 1;
        for (const key of ["cost", "cost_known"] as const) {
          if (r[key].cost > r.batched.cost + 1e-9) losses[key] += 1;
          if (r[key].cost > 1.05 * r.batched.cost + 1e-9) over[key] += 1;
          expect(r[key].cost).toBeLessThanOrEqual(1.1 * r.batched.cost + 1e-9);
          expect(r[key].requests_over_ceiling).toBe(0);
          expect(r[key].requests_over_breakpoints).toBe(0);
        }
      }),
      // The sessions that once moved late and ended right after (6.1 %, 7.7 % and 8.2 % above Hermes).
      { numRuns: 120, examples: LATE_MOVES.map((session) => [session]) },
    );
    for (const key of ["cost", "cost_known"] as const) {
      expect(over[key] / runs).toBeLessThanOrEqual(0.01);
      expect(losses[key] / runs).toBeLessThanOrEqual(0.05);
    }
  });

  it("property: wherever the session is cut right after a price move of cost, it has paid at most 5 % more than Hermes by then", () => {
    fc.assert(
      fc.property(randomSession, (s) => {
        const requests = requestsFromTurns(generateSession(s), s.systemTokens);
        const options = { model: ANTHROPIC_CACHE_MODEL, times: requestTimes(requests.length, s) };
        const hermes = replay(requests, batchedPolicy(DEFAULT_LIMITS), { ...options, limits: DEFAULT_LIMITS });
        const cost = replay(requests, costPolicy(costOptions(options, undefined)), {
          ...options,
          limits: costLimits(options),
        });
        let paid = 0;
        let hermesPaid = 0;
        cost.perRequest.forEach((request, i) => {
          paid += request.cost;
          hermesPaid += hermes.perRequest[i]!.cost;
          const moved = request.retired > (cost.perRequest[i - 1]?.retired ?? 0);
          if (moved && request.rule === "price") expect(paid).toBeLessThanOrEqual(1.05 * hermesPaid + 1e-9);
        });
      }),
      { numRuns: 60, examples: LATE_MOVES.map((session) => [session]) },
    );
  });

  it("random sessions: the same seed draws the same sessions within the ranges; losses come with where each rewrote and why", () => {
    const sessions = randomSessions(300, 7);
    expect(randomSessions(300, 7)).toEqual(sessions);
    expect(randomSessions(300, 8)).not.toEqual(sessions);
    for (const session of sessions) {
      for (const [key, [min, max]] of Object.entries(RANDOM_SESSION_RANGES)) {
        const value = session[key as keyof typeof session] as number;
        if (key === "pauseEvery" && value === 0) continue;
        expect(value).toBeGreaterThanOrEqual(min);
        expect(value).toBeLessThanOrEqual(max);
      }
    }
    expect(sessions.some((s) => s.pauseEvery === 0) && sessions.some((s) => s.pauseEvery > 0)).toBe(true);
    // Told a 90-request budget most of these sessions end before, cost loses some: each loss says why.
    const report = costLosses(sessions.slice(0, 150), { model: ANTHROPIC_CACHE_MODEL, horizon: 90 });
    expect(report.sessions).toBe(150);
    expect(report.losses.length).toBeGreaterThan(0);
    for (const loss of report.losses) {
      expect(loss.cost > loss.hermes || loss.excess_over_rival > 0.02).toBe(true);
      expect(loss.excess).toBeCloseTo(loss.cost / loss.hermes - 1, 9);
      expect(loss.why).toMatch(/^cost (rewrote at request|never rewrote)/);
      if (loss.cost_collapses.length > 0)
        expect(loss.why).toContain(
          `request${loss.cost_collapses.length > 1 ? "s" : ""} ${loss.cost_collapses.join(", ")}`,
        );
    }
    expect(report.worst_excess).toBe(Math.max(...report.losses.map((loss) => loss.excess)));
  });

  it("property: on the random sessions of --random, cost is never more than the cheapest rival + 2 %, or the replay lists the session with the rival and why", () => {
    const sessions = randomSessions(60, 11);
    const report = costLosses(sessions, { model: ANTHROPIC_CACHE_MODEL });
    const listed = report.losses.filter((loss) => loss.excess_over_rival > 0.02);
    expect(listed).toHaveLength(report.over_rival);
    for (const loss of listed) {
      expect(loss.cost).toBeCloseTo(loss.rival_cost * (1 + loss.excess_over_rival), 6);
      expect(loss.why).toMatch(/^cost (rewrote at request|never rewrote)/);
      expect(loss.why).toMatch(/keep-3|hermes|context editing|claude code/);
    }
    // Each session is checked directly too: over the bound only where the report lists it.
    for (const session of sessions) {
      const requests = requestsFromTurns(generateSession(session), session.systemTokens);
      const r = compare(requests, { model: ANTHROPIC_CACHE_MODEL, times: requestTimes(requests.length, session) });
      const cheapest = Math.min(
        r.keep3.cost,
        r.batched.cost,
        r.raised.cost,
        r.context_editing.cost,
        r.context_editing_clear_at_least.cost,
        r.claude_code.cost,
      );
      if (r.cost.cost > cheapest * 1.02 + 1e-9) expect(listed.map((loss) => loss.session)).toContainEqual(session);
    }
    // Rare: at most 1 in 20 of these sessions (docs/eviction.md lists the 300-session run).
    expect(report.over_rival / sessions.length).toBeLessThanOrEqual(0.05);
  });

  it("property: cost never rewrites an upload", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ upload: fc.boolean(), images: fc.integer({ min: 0, max: 2 }) }), { maxLength: 60 }),
        (script) => {
          const turns = script.map((t) => ({
            textTokens: 500,
            images: Array.from({ length: t.images }, () => ({ tokens: 1_500, bytes: 1_000, upload: t.upload })),
          }));
          const requests = requestsFromTurns(turns, 2_000);
          const policy = costPolicy({});
          requests.forEach((request, index) => {
            const { retired } = policy(request, { index, at: index * 30_000, count: requests.length });
            for (const s of request) if (s.image?.kind === "upload") expect(retired.has(s.image.carrier)).toBe(false);
            const outbound = applyPolicy(request, retired, ANTHROPIC_CACHE_MODEL);
            expect(outbound.filter((s) => s.image?.kind === "upload")).toEqual(
              request.filter((s) => s.image?.kind === "upload"),
            );
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("validation against logged usage", () => {
  const body = { imageTokens: 1_500, charsPerToken: 4 };
  const image = { tokens: 1_500, bytes: 350_000 };
  const lines = () =>
    readFileSync(new URL("../fixtures/replay-validate.jsonl", import.meta.url), "utf8")
      .trim()
      .split("\n")
      .map((line) => parseSessionLine(line, "anthropic", body, image) as Extract<SessionLine, { kind: "request" }>);

  it("reproduces the hand-made session: a write under the minimum, a read from 20 blocks back, uncached tail, a cold cache", () => {
    const result = validate(lines(), ANTHROPIC_CACHE_MODEL);
    expect(result.rows.map((r) => r.modelled)).toEqual(result.rows.map((r) => r.logged));
    expect(result.total_error_tokens).toBe(0);
  });

  it("reports the error when the logged usage disagrees", () => {
    const parsed = lines();
    parsed[1] = { ...parsed[1]!, usage: { cacheWriteTokens: 765, cacheReadTokens: 1_510, inputTokens: 0 } };
    const result = validate(parsed, ANTHROPIC_CACHE_MODEL);
    expect(result.total_error_tokens).toBe(2 * 507);
    expect(result.error_share).toBeGreaterThan(0);
  });

  it("reads OpenAI's cached_tokens", () => {
    expect(parseUsage({ prompt_tokens: 2_000, prompt_tokens_details: { cached_tokens: 1_152 } })).toEqual({
      cacheWriteTokens: 0,
      cacheReadTokens: 1_152,
      inputTokens: 848,
    });
  });
});

describe("the best schedule that exists (--schedules)", () => {
  it("a scheduled move retires down to the floor at that request only; the search finds the cheapest one- and two-move schedules and the cheapest safe one", async () => {
    const { bestSchedules, scheduledPolicy } = await import("../../cli/replay/schedules");
    const requests = requestsFromTurns(generateSession({ turns: 30, images: 24 }), 4_000);
    const policy = scheduledPolicy(new Set([20]));
    const retired = requests.map(
      (request, index) => policy(request, { index, at: index * 30_000, count: requests.length }).retired.size,
    );
    expect(retired[19]).toBe(0);
    expect(retired[20]).toBe(20 - 3); // request 21 carries 20 screenshots: all but the floor of 3
    expect(retired[29]).toBe(17); // held until the end
    const found = bestSchedules(requests, requestTimes(requests.length), ANTHROPIC_CACHE_MODEL);
    expect(found.tried).toBe(29 + (29 * 28) / 2);
    expect(found.safest === null || found.best.cost <= found.safest.cost).toBe(true);
    const direct = replay(requests, scheduledPolicy(new Set(found.best.moves.map((m) => m - 1))), {
      model: ANTHROPIC_CACHE_MODEL,
      times: requestTimes(requests.length),
    });
    expect(direct.cost).toBeCloseTo(found.best.cost, 6);
  });
});
