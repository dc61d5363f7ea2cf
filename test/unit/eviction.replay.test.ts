/** The replay model: prefix cache arithmetic, the two policies, generated and JSONL sessions. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  batchedPolicy,
  commonPrefixTokens,
  compare,
  DEFAULT_CACHE_MODEL,
  generateSession,
  imagesIn,
  keepNewest,
  parseSessionLine,
  replay,
  requestsFromTurns,
  type ReplayRequest,
  type Segment,
} from "../../shared/eviction/replay";
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
    expect(report.perRequest[1]).toMatchObject({ cacheReadTokens: 1280, cacheWriteTokens: 920, evictionWriteTokens: 0 });
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
    const at = { index: 0, at: 0 };
    expect(policy(requests[20]!, at).retired.size).toBe(0); // 20 screenshots
    expect([...policy(requests[21]!, at).retired]).toEqual(["turn2", "turn3", "turn4", "turn5", "turn6", "turn7", "turn8", "turn9"]);
    expect(policy(requests[29]!, at).retired.size).toBe(16); // 29 screenshots
    expect(batchedPolicy({ maxBlocks: 10, maxBytes: 24_000_000, batch: 4, floor: 3 })(requests[11]!, at).retired.size).toBe(4);
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
          const requests = requestsFromTurns(generateSession({ turns, images, imageEvery, textTokens, imageTokens }), 500);
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
    const custom = parseSessionLine('{"text_tokens": 5, "images": [{"tokens": 9, "upload": true}]}', "openai", body, image);
    expect(custom).toEqual({ kind: "turn", turn: { textTokens: 5, images: [{ tokens: 9, bytes: 350_000, upload: true }] } });
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
