/**
 * The as-sent shadow weighs an image of a model the table does not know at the cost learned from
 * that model's bills (docs/eviction.md, "Learned image cost"), as the eviction does: a gateway's
 * model behind the OpenAI route whose images cost 85 tokens is not estimated at a photo's pixels.
 */
import { describe, expect, it } from "vitest";
import { toBase64 } from "../../shared/media/data-url";
import { learnedImageCosts } from "../../shared/eviction/image-cost";
import { modelRules } from "../../shared/llm/models.table";
import { type KindUnits, shadowStep } from "../../shared/proxy/shadow";
import { encodePng, screenshotPixels } from "../fixtures/images";

const imageUnits = (units: KindUnits) => Object.values(units).reduce((sum, u) => sum + u.image, 0);

/** A Chat Completions request carrying `shots` screenshots (1200 × 900: 1,440 tokens by their pixels). */
async function request(model: string, shots: number): Promise<Record<string, unknown>> {
  const png = toBase64(await encodePng(screenshotPixels(1200, 900, 7), 1200, 900, 3));
  const content = Array.from({ length: shots }, () => ({
    type: "image_url",
    image_url: { url: `data:image/png;base64,${png}` },
  }));
  return { model, messages: [{ role: "user", content: [{ type: "text", text: "What changed?" }, ...content] }] };
}

describe("the shadow and a learned image cost", () => {
  it("an unknown model's images weigh what its bills taught (85 tokens each), a known model's their pixels", async () => {
    const model = `gateway-vision-${Date.now()}`;
    // Two pairs of billed requests two images apart: 170 tokens more each time, text unchanged.
    const session = `learn-${model}`;
    learnedImageCosts.observe(model, session, { images: 1, textTokens: 100 }, 1_000);
    learnedImageCosts.observe(model, session, { images: 3, textTokens: 100 }, 1_170);
    learnedImageCosts.observe(model, session, { images: 5, textTokens: 100 }, 1_340);
    expect(learnedImageCosts.tokensPerImage(model)).toBe(85);

    const gateway = await request(model, 2);
    const unknown = shadowStep(null, gateway, gateway, 0, modelRules("openai", model));
    expect(imageUnits(unknown.estimate.asSent)).toBe(170);

    const gpt = await request("gpt-5.4", 2);
    const known = shadowStep(null, gpt, gpt, 0, modelRules("openai", "gpt-5.4"));
    expect(imageUnits(known.estimate.asSent)).toBe(2 * 1_440);
  });
});
