/**
 * The repeat cap's 409 and `GET /v1/config` agree on `vision.max_calls_per_image` (issue 42, item 8):
 * where the key is unset (null in /v1/config), the 409 says so and names the default that applied,
 * never "= 3"; where it is set, both show the same number. Inside workerd, through the real entry.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { toBase64 } from "../../shared/media/data-url";
import { encodePng, photoPixels } from "../fixtures/images";
import { callJson, expectErrorShape, uniqueToken } from "./helpers";

let image: string;

beforeAll(async () => {
  image = toBase64(await encodePng(photoPixels(160, 100, 11), 160, 100, 3));
});

/** Loads one image until the cap refuses it; the 409's message. */
async function refusal(caller: "main" | "subagent", vars: Record<string, string>): Promise<string> {
  const session = uniqueToken();
  for (let i = 0; i < 10; i++) {
    const { status, body } = await callJson("/v1/vision_analyze", {
      body: { image: { data: image }, session_id: session, caller },
      vars,
    });
    if (status === 409) return expectErrorShape(body).message;
    expect(status).toBe(200);
  }
  throw new Error("never capped");
}

/** The setting a 409 message ends with: the number it says the key is, or null for "unset". */
function statedSetting(message: string): number | null {
  const match = /\(vision\.max_calls_per_image (?:= (\d+)|unset: \d+ for subagents); 0 = unlimited\)$/.exec(message);
  expect(match, message).not.toBeNull();
  return match![1] === undefined ? null : Number(match![1]);
}

describe("the 409 states vision.max_calls_per_image as /v1/config reports it", () => {
  it.each([
    ["unset, a subagent (the default cap of 3)", "subagent", {}],
    ["set to 2, the main agent", "main", { VISION_MAX_CALLS_PER_IMAGE: "2" }],
    ["set to 3, a subagent", "subagent", { VISION_MAX_CALLS_PER_IMAGE: "3" }],
  ] as const)("%s", async (_, caller, vars) => {
    const message = await refusal(caller, vars);
    const config = (await callJson("/v1/config", { vars })).body;
    expect(statedSetting(message)).toBe(config.vision.max_calls_per_image);
  });

  it("unset: the message names the default that applied and never claims the key is 3", async () => {
    const message = await refusal("subagent", {});
    expect(message).toContain("(vision.max_calls_per_image unset: 3 for subagents; 0 = unlimited)");
    expect(message).not.toContain("max_calls_per_image = 3");
    expect(message).toContain("loaded into context 3 time(s)");
  });
});
