/**
 * The image-cost learner (docs/eviction.md, "Learned image cost"): tokens per image from two
 * requests of a session that differ by known images, per model, every sample and the memory bounded.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ImageCostLearner, LEARNED_IMAGE_TOKENS, sentShape } from "../../shared/eviction/image-cost";
import { OPENAI_CHAT } from "../../shared/llm/openai.chat";

describe("ImageCostLearner", () => {
  it("learns from the difference of two requests: (billed prompt − text) per added image, after 2 samples", () => {
    const learner = new ImageCostLearner();
    learner.observe("m", "s", { images: 1, textTokens: 1_000 }, 1_000 + 2_000);
    expect(learner.tokensPerImage("m")).toBeUndefined();
    learner.observe("m", "s", { images: 2, textTokens: 1_300 }, 1_300 + 4_000);
    expect(learner.tokensPerImage("m")).toBeUndefined(); // one sample
    learner.observe("m", "s", { images: 4, textTokens: 1_500 }, 1_500 + 8_000);
    expect(learner.tokensPerImage("m")).toBe(2_000);
    expect(learner.snapshot()).toEqual({ m: { tokens_per_image: 2_000, samples: 2 } });
    // Another session of the same model adds to it; a pair with no added image teaches nothing.
    learner.observe("m", "t", { images: 3, textTokens: 0 }, 6_000);
    learner.observe("m", "t", { images: 3, textTokens: 100 }, 6_100);
    expect(learner.snapshot().m!.samples).toBe(2);
  });

  it("a hostile or broken bill cannot move a model's cost out of bounds, nor far from what it learned", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.nat(1e6), fc.double({ min: -1e15, max: 1e15 })), {
          maxLength: 60,
        }),
        (bills) => {
          const learner = new ImageCostLearner();
          for (const [images, text, prompt] of bills) learner.observe("m", "s", { images, textTokens: text }, prompt);
          const learned = learner.tokensPerImage("m");
          if (learned !== undefined) {
            expect(learned).toBeGreaterThanOrEqual(LEARNED_IMAGE_TOKENS.min);
            expect(learned).toBeLessThanOrEqual(LEARNED_IMAGE_TOKENS.max);
          }
        },
      ),
    );
    const learner = new ImageCostLearner();
    for (let i = 0; i < 20; i++) learner.observe("m", "s", { images: i, textTokens: 0 }, i * 1_000);
    expect(learner.tokensPerImage("m")).toBe(1_000);
    // An absurd bill is not a sample; a bad one in bounds moves a settled figure by a sixteenth of its error.
    learner.observe("m", "s", { images: 20, textTokens: 0 }, 1e12);
    expect(learner.tokensPerImage("m")).toBe(1_000);
    learner.observe("m", "s", { images: 21, textTokens: 0 }, 1e12 + 12_000);
    expect(learner.tokensPerImage("m")).toBe(1_000 + Math.round(11_000 / 16));
  });

  it("keeps at most 200 models and 2,000 sessions, the most recently used", () => {
    const learner = new ImageCostLearner();
    for (let m = 0; m < 300; m++)
      for (let i = 0; i < 3; i++) learner.observe(`model-${m}`, `s-${m}`, { images: i, textTokens: 0 }, i * 500);
    const models = Object.keys(learner.snapshot());
    expect(models).toHaveLength(200);
    expect(models).toContain("model-299");
    expect(models).not.toContain("model-0");
    // The first sessions are forgotten: a pair across the bound teaches nothing.
    for (let s = 0; s < 2_001; s++) learner.observe("x", `session-${s}`, { images: 0, textTokens: 0 }, 0);
    learner.observe("x", "session-0", { images: 5, textTokens: 0 }, 5_000);
    expect(learner.snapshot().x).toBeUndefined();
  });

  it("counts a request's image blocks and its text as sent", () => {
    const shape = sentShape(
      OPENAI_CHAT,
      [
        {
          role: "user",
          content: [
            { type: "text", text: "abcd".repeat(10) },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        { role: "assistant", content: "done" },
      ],
      ["system!!"],
    );
    expect(shape).toEqual({ images: 1, textTokens: 10 + 1 + 2 });
  });
});
