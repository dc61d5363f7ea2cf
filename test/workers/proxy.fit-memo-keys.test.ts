/**
 * The fit memory and the proxy's `plain` set find an image by a short key (shared/text-map.ts:
 * its length and a few sampled windows) and answer only for a text equal in full: a screenshot
 * that agrees with a remembered one on every sampled window but differs elsewhere is not sent as
 * the remembered one's fit; it goes to the fitter as its own image, through the transform alone
 * and through the proxy, whose parse puts the memory's own copy of a seen image in the body.
 */
import { describe, expect, it } from "vitest";
import { ANTHROPIC } from "../../shared/llm/anthropic.provider";
import { transformConversation } from "../../shared/proxy/transform";
import { TextMap, TextSet, textKey } from "../../shared/text-map";
import { workersDeps } from "../../workers/deps";
import { encodePng, screenshotPixels, toBase64 } from "../fixtures/images";
import { FIT_SETTINGS, llmCalls, postJson, screenshotCall, testEnv, uniqueToken } from "./helpers";

/** `text` with one base64 character changed outside every sampled window: the same short key. */
function sameKeyOtherText(text: string): string {
  const key = textKey(text);
  for (let i = Math.floor(text.length / 2); i < text.length; i++) {
    const other = `${text.slice(0, i)}${text[i] === "A" ? "B" : "A"}${text.slice(i + 1)}`;
    if (textKey(other) === key) return other;
  }
  throw new Error("no position outside the sampled windows");
}

const withImage = (tag: string, data: string) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 64,
  system: `keys ${tag}`,
  messages: [{ role: "user", content: "go" }, ...screenshotCall("t1", data)],
});

const sentData = (body: any): string => body.messages[2].content[0].content[0].source.data;

describe("images found by a short key", () => {
  it("never gives one screenshot's fit to another that shares its sampled windows", async () => {
    const tag = uniqueToken();
    const shot = toBase64(
      await encodePng(screenshotPixels(1920, 1080, 5_000 + Math.floor(Math.random() * 1e6)), 1920, 1080, 3),
    );
    const twin = sameKeyOtherText(shot);
    expect(twin).not.toBe(shot);
    expect(twin.length).toBe(shot.length);
    expect(textKey(twin)).toBe(textKey(shot));

    const ports = { cache: workersDeps(testEnv).cache, clock: Date.now, fitImage: workersDeps(testEnv).fitImage };
    const format = ANTHROPIC.paths["/v1/messages"]!.format;
    const first = await transformConversation(withImage(tag, shot), ANTHROPIC, format, `a-${tag}`, FIT_SETTINGS, ports);
    await first.writes;
    expect([first.fitted, first.firstFits]).toEqual([1, 1]);
    const fit = sentData(first.body);

    // The twin is remembered nowhere: it goes to the fitter (a fit of its own, or refused as
    // corrupt and sent as it came), never out as the first screenshot's fit.
    const second = await transformConversation(
      withImage(tag, twin),
      ANTHROPIC,
      format,
      `b-${tag}`,
      FIT_SETTINGS,
      ports,
    );
    await second.writes;
    expect(second.firstFits + second.fitSkipped).toBe(1);
    expect(sentData(second.body)).not.toBe(fit);

    // The first is still remembered as itself.
    const again = await transformConversation(withImage(tag, shot), ANTHROPIC, format, `c-${tag}`, FIT_SETTINGS, ports);
    expect([again.fitted, again.firstFits]).toEqual([1, 0]);
    expect(sentData(again.body)).toBe(fit);
  });

  it("through the proxy, where the parse takes the memory's copy of a seen image, sends a twin as itself", async () => {
    const tag = uniqueToken();
    const shot = toBase64(
      await encodePng(screenshotPixels(1920, 1080, 7_000 + Math.floor(Math.random() * 1e6)), 1920, 1080, 3),
    );
    const twin = sameKeyOtherText(shot);
    const post = async (data: string) => {
      const response = await postJson("/anthropic/v1/messages", withImage(tag, data), { "x-api-key": "k" });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      return response.headers.get("x-edge-fitted");
    };
    expect(await post(shot)).toBe("1");
    // The twin's parse finds no copy of it (shared/http/body.ts `known`, fit-memo.ts `plainCopy`):
    // the provider gets another body than the first, not the first screenshot's fit.
    await post(twin);
    // The first, sent again, is the seen image: the same body as its first time.
    expect(await post(shot)).toBe("1");
    const calls = await llmCalls(tag);
    expect(calls).toHaveLength(3);
    expect(calls[1].body_sha256).not.toBe(calls[0].body_sha256);
    expect(calls[2].body_sha256).toBe(calls[0].body_sha256);
  });

  it("keeps texts that share a key apart, in a map and in a set", () => {
    const text = "QUJD".repeat(50_000);
    const twin = sameKeyOtherText(text);
    const map = new TextMap<number>();
    map.set(text, 1);
    expect(map.get(twin)).toBeUndefined();
    map.set(twin, 2);
    expect([map.get(text), map.get(twin), map.size]).toEqual([1, 2, 2]);
    expect(map.delete(text)).toBe(true);
    expect([map.get(text), map.get(twin), map.size]).toEqual([undefined, 2, 1]);
    const set = new TextSet().add(text);
    expect([set.has(text), set.has(twin), set.has(`${text}`.slice(0))]).toEqual([true, false, true]);
  });
});
