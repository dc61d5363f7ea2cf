/**
 * The cost strategy's estimates and provider facts, directly: image sizes from the first bytes of
 * base64, image and text tokens, the read discount per model, OpenAI's 500-image ceiling and the
 * front marker keeping the client's 1-hour TTL.
 */
import { describe, expect, it } from "vitest";
import { cachePrices } from "../../shared/eviction/cost";
import { EvictRequest } from "../../shared/eviction/evict.schema";
import { evictContext } from "../../shared/eviction/evict.service";
import { imageSize, imageTokens, MAX_IMAGE_TOKENS, textTokens } from "../../shared/llm/estimate";
import { animatedGif, photoPixels, pngHeaderOnly, webpFrom } from "../fixtures/images";
import { anthropicScreenshots, conversation, screenshots } from "./eviction.fixtures";

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** A baseline JPEG's first segments: SOI, APP0 (JFIF), an optional padding APP1, then SOF0 with the size. */
function jpegHead(width: number, height: number, app1Bytes = 0): Uint8Array {
  const parts: number[] = [
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00,
  ];
  if (app1Bytes > 0) {
    const length = app1Bytes + 2;
    parts.push(0xff, 0xe1, length >> 8, length & 0xff, ...new Array<number>(app1Bytes).fill(0x20));
  }
  parts.push(0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03);
  for (let c = 1; c <= 3; c++) parts.push(c, c === 1 ? 0x22 : 0x11, c === 1 ? 0 : 1);
  parts.push(0xff, 0xda); // the scan would follow
  return new Uint8Array(parts);
}

/**
 * A WebP's first 30 bytes with a large declared body (as a real file of many KB has): the RIFF
 * header, then a VP8X (canvas), VP8 (key frame) or VP8L chunk header and the bytes that hold the size.
 */
function webpHead(chunk: "VP8X" | "VP8 ", width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(30);
  const ascii = (at: number, text: string) =>
    bytes.set(
      [...text].map((c) => c.charCodeAt(0)),
      at,
    );
  const view = new DataView(bytes.buffer);
  ascii(0, "RIFF");
  view.setUint32(4, 250_000, true);
  ascii(8, "WEBP");
  ascii(12, chunk);
  view.setUint32(16, 240_000, true);
  if (chunk === "VP8X") {
    const u24 = (at: number, value: number) => bytes.set([value & 0xff, (value >> 8) & 0xff, value >> 16], at);
    u24(24, width - 1);
    u24(27, height - 1);
  } else {
    bytes.set([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a], 20); // a key frame's tag, the start code
    view.setUint16(26, width, true);
    view.setUint16(28, height, true);
  }
  return bytes;
}

describe("imageSize", () => {
  it("reads PNG, GIF, JPEG and WebP sizes from plain base64 and from data: URLs", () => {
    expect(imageSize(base64(pngHeaderOnly(1280, 800)))).toEqual({ width: 1280, height: 800 });
    expect(imageSize(`data:image/png;base64,${base64(pngHeaderOnly(3000, 20))}`)).toEqual({ width: 3000, height: 20 });
    const gif = animatedGif();
    const gifWidth = gif[6]! | (gif[7]! << 8);
    const gifHeight = gif[8]! | (gif[9]! << 8);
    expect(imageSize(base64(gif))).toEqual({ width: gifWidth, height: gifHeight });
    // A whole image shorter than the header window: its base64 padding is inside the window.
    expect(base64(jpegHead(1920, 1080)).endsWith("=")).toBe(true);
    expect(imageSize(base64(jpegHead(1920, 1080)))).toEqual({ width: 1920, height: 1080 });
    expect(imageSize(base64(jpegHead(1920, 1080, 1_000)))).toEqual({ width: 1920, height: 1080 });
    expect(imageSize(`data:image/webp;base64,${base64(webpFrom(photoPixels(40, 24), 40, 24))}`)).toEqual({
      width: 40,
      height: 24,
    });
  });

  it("says null (the caller then assumes the largest image) for what it cannot read", () => {
    expect(imageSize("")).toBeNull();
    expect(imageSize("data:image/png;base64")).toBeNull(); // no comma
    expect(imageSize("not base64 at all, not at all!!")).toBeNull();
    expect(imageSize(base64(new Uint8Array(40).fill(7)))).toBeNull(); // no known signature
    expect(imageSize(base64(pngHeaderOnly(1280, 800)).slice(0, 20))).toBeNull(); // cut before the size
    expect(imageSize(base64(pngHeaderOnly(0, 800)))).toBeNull();
    // A JPEG cut before its frame header, one whose scan starts before any, one with a zero height.
    expect(imageSize(base64(jpegHead(1920, 1080, 8_000).subarray(0, 6_000)))).toBeNull();
    expect(imageSize(base64(new Uint8Array([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 1, 2, 3, 4, 5, 6])))).toBeNull();
    expect(imageSize(base64(jpegHead(640, 0)))).toBeNull();
    // A WebP whose first chunk is none of VP8, VP8L, VP8X.
    const odd = webpHead("VP8X", 100, 100);
    odd.set([0x41, 0x4c, 0x50, 0x48], 12); // "ALPH"
    expect(imageSize(base64(odd))).toBeNull();
  });

  it("reads sizes that lie beyond the first kilobytes: a JPEG after 60 KB of EXIF and ICC, a WebP of any length", () => {
    // EXIF and an ICC profile first (up to 64 KB each on a camera JPEG), with fill bytes before a marker.
    const exif = jpegHead(4032, 3024, 60_000);
    const withIcc = new Uint8Array(exif.length + 3_004 + 2);
    withIcc.set(exif.subarray(0, 20));
    withIcc.set([0xff, 0xe2, (3_002 >> 8) & 0xff, 3_002 & 0xff], 20);
    withIcc.set([0xff, 0xff], 20 + 3_004); // two fill bytes
    withIcc.set(exif.subarray(20), 20 + 3_004 + 2);
    const big = base64(withIcc);
    expect(imageSize(big)).toEqual({ width: 4032, height: 3024 });
    expect(imageSize(`data:image/jpeg;base64,${big}`)).toEqual({ width: 4032, height: 3024 });
    // A progressive frame header (SOF2) names the size the same way.
    const progressive = jpegHead(800, 600, 5_000);
    progressive[progressive.lastIndexOf(0xc0)] = 0xc2;
    expect(imageSize(base64(progressive))).toEqual({ width: 800, height: 600 });

    // Lossless WebP (VP8L) far past 3 KB, and the VP8X and lossy VP8 headers at their fixed offsets.
    const lossless = webpFrom(photoPixels(300, 200), 300, 200);
    expect(lossless.length).toBeGreaterThan(20_000);
    expect(imageSize(base64(lossless))).toEqual({ width: 300, height: 200 });
    expect(imageSize(base64(webpHead("VP8X", 5000, 3000)))).toEqual({ width: 5000, height: 3000 });
    expect(imageSize(base64(webpHead("VP8 ", 4000, 2250)))).toEqual({ width: 4000, height: 2250 });
  });
});

describe("token estimates", () => {
  it("images: width × height / 750, at least 1, capped where the provider downscales; unknown = the cap", () => {
    expect(imageTokens({ width: 1280, height: 800 })).toBe(Math.ceil((1280 * 800) / 750));
    expect(imageTokens({ width: 1, height: 1 })).toBe(1);
    expect(imageTokens({ width: 5120, height: 2880 })).toBe(MAX_IMAGE_TOKENS);
    expect(imageTokens(null)).toBe(MAX_IMAGE_TOKENS);
  });

  it("text: 4 characters a token over strings, text blocks and tool calls, never counting image data", () => {
    expect(textTokens("abcdefgh")).toBe(2);
    expect(
      textTokens([
        { type: "text", text: "abcd" },
        { type: "image", source: { type: "base64", data: "x".repeat(40_000) } },
      ]),
    ).toBe(1);
    expect(
      textTokens({
        type: "tool_result",
        content: [
          { type: "text", text: "12345678" },
          { type: "image", source: { data: "y".repeat(9_999) } },
        ],
      }),
    ).toBe(2);
    expect(textTokens({ type: "tool_use", name: "shot", input: { a: 1 } })).toBe(Math.ceil((4 + '{"a":1}'.length) / 4));
    expect(textTokens(null)).toBe(0);
  });
});

describe("provider facts", () => {
  it("the cache prices per provider and model: Claude writes at 1.25x and reads at 0.1x; OpenAI writes at 1x before GPT-5.6 and reads gpt-5 0.1x, gpt-4.1 / o3 / o4 0.25x, o3-mini and others 0.5x", () => {
    const read = (provider: string | undefined, model: string | undefined) =>
      cachePrices(provider, model).readMultiplier;
    expect(cachePrices("anthropic", "claude-sonnet-4-5")).toEqual({ writeMultiplier: 1.25, readMultiplier: 0.1 });
    expect(cachePrices(undefined, undefined)).toEqual({ writeMultiplier: 1.25, readMultiplier: 0.1 });
    expect(cachePrices("openai", "gpt-4o")).toEqual({ writeMultiplier: 1, readMultiplier: 0.5 });
    expect(cachePrices("azure", "gpt-4o").writeMultiplier).toBe(1);
    expect(read("openai", "gpt-5-mini")).toBe(0.1);
    expect(read("openai", "GPT-4.1")).toBe(0.25);
    expect(read("azure", "o3-mini")).toBe(0.5); // $0.55 cached on $1.10: its own row, not o3's
    expect(read("openai", "o4-mini")).toBe(0.25);
    // An OpenAI model the table does not know is taken for a newer one: GPT-5.6's billed writes.
    expect(cachePrices("openai", undefined)).toEqual({ writeMultiplier: 1.25, readMultiplier: 0.1 });
  });

  it("OpenAI's true ceiling is 500 images with cost (hermes keeps 20): no request goes out with more", () => {
    const under = evictContext(
      EvictRequest.parse({
        format: "openai",
        strategy: "cost",
        provider: "openai",
        messages: conversation("openai", screenshots(500)),
      }),
      { now: 0 },
    );
    expect(under.stats.limits.max_blocks).toBe(500);
    const hermes = evictContext(
      EvictRequest.parse({ format: "openai", messages: conversation("openai", screenshots(500)) }),
    );
    expect(hermes.stats.limits.max_blocks).toBe(20);
    const over = evictContext(
      EvictRequest.parse({
        format: "openai",
        strategy: "cost",
        provider: "openai",
        messages: conversation("openai", screenshots(501)),
      }),
      { now: 0 },
    );
    expect(over.stats.limits.max_blocks).toBe(500);
    expect(over.stats.fits).toBe(true);
    expect(over.stats.image_blocks_after).toBeLessThanOrEqual(500);
  });

  it("the front marker takes the client's 1-hour TTL when the client uses it, else the default", () => {
    const size = { width: 1280, height: 800 };
    const run = (ttl: string | undefined) => {
      const messages = anthropicScreenshots(25, size).map((m, i, all) => {
        if (i !== all.length - 1 || !Array.isArray(m.content)) return m;
        const content = (m.content as Record<string, unknown>[]).slice();
        content[content.length - 1] = {
          ...content[content.length - 1]!,
          cache_control: ttl ? { type: "ephemeral", ttl } : { type: "ephemeral" },
        };
        return { ...m, content };
      });
      const out = evictContext(
        EvictRequest.parse({
          format: "anthropic",
          strategy: "cost",
          provider: "anthropic",
          manage_cache: true,
          messages,
        }),
        { now: 0 },
      );
      const at = out.stats.cache_marker!;
      const block = (out.messages[at.message] as { content: Record<string, unknown>[] }).content[at.block]!;
      return block.cache_control;
    };
    expect(run("1h")).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(run(undefined)).toEqual({ type: "ephemeral" });
  });
});
