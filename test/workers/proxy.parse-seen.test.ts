/**
 * The parse of a body whose images the isolate has seen (shared/http/body.ts `known`, from
 * shared/proxy/fit-memo.ts `plainCopy`): a long string the fit memory knows to hold no control
 * character is not checked again, and one it knows that does hold one (base64 wrapped in lines,
 * sent escaped) is still refused when a body carries it with its line breaks raw, which JSON does
 * not allow in a string: the same 400 as before the image was seen, and nothing sent upstream.
 * The body sent is written without checking the fits it carries (transform.ts `plain`), so a fit
 * read from the store that is not base64 is not taken: the image is fitted again.
 */
import { describe, expect, it } from "vitest";
import { encodePng, screenshotPixels, toBase64 } from "../fixtures/images";
import { loadConfig } from "../../shared/config/config.load";
import { sha256Hex } from "../../shared/hash";
import { llmCalls, postJson, screenshotCall, testEnv, uniqueToken } from "./helpers";

/** An Anthropic call whose one tool result carries `data` as its image. */
const oneToolImage = (tag: string, data: string) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 64,
  system: `agent ${tag}`,
  messages: [{ role: "user", content: `start ${tag}` }, ...screenshotCall("t1", data)],
});

describe("the parse of a body whose images were seen", () => {
  it("refuses a seen image's line breaks sent raw inside its string, as before it was seen, and takes it escaped again", async () => {
    const tag = uniqueToken();
    // A 1920x1080 screenshot (over the long edge: fitted, so remembered), well over the parse's 64 Ki
    // characters, in lines of 76 as MIME writes base64.
    const flat = toBase64(await encodePng(screenshotPixels(1920, 1080, 91), 1920, 1080, 3));
    const wrapped = flat.replace(/(.{76})/g, "$1\r\n");
    const escaped = JSON.stringify(oneToolImage(tag, wrapped));
    const first = await postJson("/anthropic/v1/messages", escaped, { "x-api-key": "k" });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-edge-fitted")).toBe("1");
    await first.arrayBuffer();
    // The same image with its line breaks raw: not JSON.
    const raw = escaped.replaceAll("\\r\\n", "\r\n");
    expect(raw.length).toBeLessThan(escaped.length);
    const refused = await postJson("/anthropic/v1/messages", raw, { "x-api-key": "k" });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(/not valid JSON/);
    expect(await llmCalls(tag)).toHaveLength(1);
    // Sent escaped again, it is the seen image: fitted as before.
    const again = await postJson("/anthropic/v1/messages", escaped, { "x-api-key": "k" });
    expect(again.status).toBe(200);
    expect(again.headers.get("x-edge-fitted")).toBe("1");
    await again.arrayBuffer();
    expect(await llmCalls(tag)).toHaveLength(2);
  });
});

describe("a fit read from the store", () => {
  it("is taken only as base64: a stored one with a quote is fitted again, and the provider gets valid JSON", async () => {
    const tag = uniqueToken();
    const data = toBase64(await encodePng(screenshotPixels(1920, 1080, 92), 1920, 1080, 3));
    // The store's entry for this image under the default settings (fit-memo.ts `fitKey`).
    const { vision } = loadConfig({}).config;
    const shape = `${vision.embed_target_bytes}:${vision.max_long_edge}:${vision.max_input_pixels}`;
    const key = `proxy:v1:fit:${await sha256Hex(`${shape}:${data}`)}`;
    const bad = {
      value: { mediaType: "image/png", data: `${"A".repeat(70_000)}"}]}` },
      expiresAt: Date.now() + 3_600_000,
    };
    await testEnv.CACHE.put(key, JSON.stringify(bad), { expirationTtl: 3600 });
    const response = await postJson("/anthropic/v1/messages", oneToolImage(tag, data), { "x-api-key": "k" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("1");
    await response.arrayBuffer();
    const [seen] = await llmCalls(tag);
    expect(seen.images).toBe(1);
  });
});
