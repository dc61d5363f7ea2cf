/**
 * vision_analyze through the real Workers entry: the embed budget, pass-through, the native and
 * descriptor paths, the per-session repeat cap in its Durable Object, and every refusal.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { toBase64 } from "../../shared/media/data-url";
import { encodePng, ftypHeader, junkBytes, photoPixels, pngHeaderOnly, screenshotPixels } from "../fixtures/images";
import { call, callJson, EMULATOR, expectErrorShape, imageBase64, uniqueToken } from "./helpers";

let screenshot: Uint8Array; // 2880x1800 PNG, far over the budget
let small: Uint8Array; // 320x200 PNG that fits as it is
let other: Uint8Array; // another small image

beforeAll(async () => {
  screenshot = await encodePng(screenshotPixels(2880, 1800), 2880, 1800, 3);
  small = await encodePng(photoPixels(320, 200, 3), 320, 200, 3);
  other = await encodePng(photoPixels(300, 180, 4), 300, 180, 3);
});

const analyze = (body: Record<string, unknown>, vars?: Record<string, unknown>) =>
  callJson("/v1/vision_analyze", { body, vars });
const inline = (bytes: Uint8Array) => ({ data: toBase64(bytes) });

describe("the embed budget", () => {
  it("fits a 2880x1800 screenshot to exactly 1568 wide within 256 KiB, with Anthropic blocks", async () => {
    const { status, body } = await analyze({
      image: inline(screenshot),
      session_id: uniqueToken(),
      model: { provider: "anthropic", name: "claude-sonnet-4-5" },
    });
    expect(status).toBe(200);
    expect(body.path).toBe("native");
    expect([body.image.width, body.image.height]).toEqual([1568, 980]);
    expect(body.image.data_url_bytes).toBeLessThanOrEqual(262_144);
    expect(body.image.data_url_bytes).toBe(`data:${body.image.media_type};base64,${imageBase64(body)}`.length);
    expect(body.image.bytes).toBe(atob(imageBase64(body)).length);
    expect(body.original).toEqual({ media_type: "image/png", width: 2880, height: 1800, bytes: screenshot.byteLength });
    expect(body.note).toContain("1568x980");
    expect(body.content[0]).toEqual({
      type: "image",
      source: { type: "base64", media_type: body.image.media_type, data: imageBase64(body) },
    });
    // The bytes travel once: in the image block, not again beside it.
    expect(body.image.data).toBeUndefined();
    expect(JSON.stringify(body).split(imageBase64(body).slice(0, 64)).length).toBe(2);
  });

  it("honours a smaller configured budget", async () => {
    const { body } = await analyze(
      { image: inline(screenshot), session_id: uniqueToken() },
      { VISION_EMBED_TARGET_BYTES: "65536" },
    );
    expect(body.image.data_url_bytes).toBeLessThanOrEqual(65_536);
    expect(Math.max(body.image.width, body.image.height)).toBeLessThanOrEqual(1568);
  });

  it("passes an image that already fits through byte-identical", async () => {
    const { body } = await analyze({ image: inline(small), session_id: uniqueToken() });
    expect(imageBase64(body)).toBe(toBase64(small));
    expect(body.image.media_type).toBe("image/png");
    expect([body.image.width, body.image.height]).toEqual([320, 200]);
  });

  it("takes a data: URL, and OpenAI blocks for an OpenAI model", async () => {
    const { body } = await analyze({
      image: { data: `data:image/png;base64,${toBase64(small)}` },
      session_id: uniqueToken(),
      model: { provider: "openai", name: "gpt-4.1" },
    });
    expect(body.path).toBe("native");
    expect(body.content[0]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${toBase64(small)}` },
    });
  });

  it("takes a multipart upload", async () => {
    const form = new FormData();
    form.set("image", new Blob([small as Uint8Array<ArrayBuffer>], { type: "image/png" }), "small.png");
    form.set("session_id", uniqueToken());
    form.set("caller", "subagent");
    form.set("region", "[0, 0, 160, 100]");
    const request = new Request("https://x/", { method: "POST", body: form });
    const response = await call("/v1/vision_analyze", {
      raw: new Uint8Array(await request.arrayBuffer()),
      headers: { "content-type": request.headers.get("content-type")! },
    });
    const body = await response.json<any>();
    expect(response.status).toBe(200);
    expect([body.image.width, body.image.height]).toEqual([160, 100]);
    expect(body.embed_cap).toBe(3);
  });

  it("applies a region before downscaling and says so in the note", async () => {
    const { body } = await analyze({
      image: inline(screenshot),
      region: [100, 200, 1100, 700],
      session_id: uniqueToken(),
    });
    expect([body.image.width, body.image.height]).toEqual([1000, 500]);
    expect(body.note).toContain("100");
    expect(body.note).toContain("200");
  });

  it("clamps a region that starts left of or above the image to the image, as the spec says", async () => {
    const { status, body } = await analyze({
      image: inline(small),
      region: [-10, -10, 50, 40],
      session_id: uniqueToken(),
    });
    expect(status).toBe(200);
    expect([body.image.width, body.image.height]).toEqual([50, 40]);
    expect(body.note).toContain("Cropped to region [0,0,50,40]");
  });
});

describe("refusals", () => {
  it("refuses a zero-area region with the image size in the message", async () => {
    const { status, body } = await analyze({
      image: inline(small),
      region: [10, 10, 10, 50],
      session_id: uniqueToken(),
    });
    expect(status).toBe(400);
    expect(expectErrorShape(body).message).toContain("320x200");
  });

  it("refuses a region entirely outside the image with the image size in the message", async () => {
    const { status, body } = await analyze({
      image: inline(small),
      region: [5000, 5000, 6000, 6000],
      session_id: uniqueToken(),
    });
    expect(status).toBe(400);
    expect(expectErrorShape(body).message).toContain("320x200");
  });

  it.each([
    ["HEIC", ftypHeader("heic", ["mif1", "heic"])],
    ["AVIF", ftypHeader("avif", ["mif1", "avif"])],
  ])("refuses %s with 415 naming the format and what to do", async (format, bytes) => {
    const { status, body } = await analyze({ image: inline(bytes), session_id: uniqueToken() });
    expect(status).toBe(415);
    const error = expectErrorShape(body);
    expect(error.code).toBe("unsupported_media_type");
    expect(error.message).toContain(format);
    expect(error.message).toMatch(/JPEG|PNG/);
  });

  it("refuses junk bytes with 415", async () => {
    const { status, body } = await analyze({ image: inline(junkBytes()), session_id: uniqueToken() });
    expect(status).toBe(415);
    expect(expectErrorShape(body).code).toBe("unsupported_media_type");
  });

  it("refuses a 60 MP image with 413 from its header alone", async () => {
    const { status, body } = await analyze({ image: inline(pngHeaderOnly(10_000, 6_000)), session_id: uniqueToken() });
    expect(status).toBe(413);
    expect(expectErrorShape(body).code).toBe("image_too_large");
  });

  it("refuses invalid base64 with 400", async () => {
    const bad = await analyze({ image: { data: "not base64 at all!!" }, session_id: "s" });
    expect(bad.status).toBe(400);
    expect(expectErrorShape(bad.body).code).toBe("invalid_request");
  });

  it("refuses a body over 34 MiB with 413 before parsing", async () => {
    const response = await callJson("/v1/vision_analyze", { raw: "x".repeat(34 * 1024 * 1024 + 1) });
    expect(response.status).toBe(413);
  });
});

describe("the repeat cap", () => {
  it("lets a subagent load an image 3 times (crops count) and refuses the 4th with the exact message", async () => {
    const session = uniqueToken();
    const load = (region?: number[]) =>
      analyze({ image: inline(screenshot), session_id: session, caller: "subagent", region });
    const counts = [];
    for (const region of [undefined, [0, 0, 500, 500], [500, 500, 900, 900]]) {
      const { status, body } = await load(region);
      expect(status).toBe(200);
      counts.push([body.embed_count, body.embed_cap]);
    }
    expect(counts).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    const fourth = await load([0, 0, 100, 100]);
    expect(fourth.status).toBe(409);
    const error = expectErrorShape(fourth.body);
    expect(error.code).toBe("embed_cap_reached");
    expect(error.message).toBe(
      "vision_analyze refused: this image has already been loaded into context 3 time(s) in this session (region crops of the same image count too), and every native load re-sends the full image on each later API call. Answer from what you can already see, or ask the user. (vision.max_calls_per_image unset: 3 for subagents; 0 = unlimited)",
    );
    const otherImage = await analyze({ image: inline(other), session_id: session, caller: "subagent" });
    expect(otherImage.status).toBe(200);
    const otherSession = await analyze({ image: inline(screenshot), session_id: uniqueToken(), caller: "subagent" });
    expect(otherSession.status).toBe(200);
  });

  it("leaves the main agent unlimited when the cap is unset", async () => {
    const session = uniqueToken();
    for (let i = 1; i <= 5; i++) {
      const { status, body } = await analyze({ image: inline(small), session_id: session, caller: "main" });
      expect(status).toBe(200);
      expect([body.embed_count, body.embed_cap]).toEqual([i, null]);
    }
  });

  it("applies an explicit cap of 1 to every caller, and 0 means unlimited", async () => {
    const session = uniqueToken();
    const capOne = { VISION_MAX_CALLS_PER_IMAGE: "1" };
    expect((await analyze({ image: inline(small), session_id: session }, capOne)).status).toBe(200);
    const second = await analyze({ image: inline(small), session_id: session }, capOne);
    expect(second.status).toBe(409);
    expect(expectErrorShape(second.body).message).toContain("loaded into context 1 time(s)");
    const unlimited = { VISION_MAX_CALLS_PER_IMAGE: "0" };
    for (let i = 0; i < 4; i++)
      expect((await analyze({ image: inline(small), session_id: session, caller: "subagent" }, unlimited)).status).toBe(
        200,
      );
  });

  it("embeds exactly 3 times out of 6 parallel loads with cap 3", async () => {
    const session = uniqueToken();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        analyze({ image: inline(small), session_id: session }, { VISION_MAX_CALLS_PER_IMAGE: "3" }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 409, 409, 409]);
    expect(
      answers
        .filter((a) => a.status === 200)
        .map((a) => a.body.embed_count)
        .sort(),
    ).toEqual([1, 2, 3]);
  });

  it("does not count descriptor-path loads", async () => {
    const session = uniqueToken();
    const model = { provider: "deepseek", name: "deepseek-chat" };
    for (let i = 0; i < 4; i++) {
      const { status, body } = await analyze(
        { image: inline(small), session_id: session, caller: "subagent", model },
        { AUXILIARY_VISION_MODEL: "emu-vision" },
      );
      expect(status).toBe(200);
      expect(body.path).toBe("descriptor");
    }
    const native = await analyze({ image: inline(small), session_id: session, caller: "subagent" });
    expect(native.body.embed_count).toBe(1);
  });
});

describe("the descriptor path", () => {
  it("sends the fitted image to the auxiliary model and returns only its text", async () => {
    const token = uniqueToken();
    const { status, body } = await analyze(
      {
        image: inline(screenshot),
        session_id: uniqueToken(),
        question: `what is misaligned ${token}`,
        model: { provider: "gemini", name: "gemini-2.5-flash" },
      },
      { AUXILIARY_VISION_MODEL: "emu-vision", AUXILIARY_VISION_API_KEY: "aux-key-123456" },
    );
    expect(status).toBe(200);
    expect(body.path).toBe("descriptor");
    expect(body.model).toBe("emu-vision");
    expect(typeof body.description).toBe("string");
    expect(body.image).toBeUndefined();
    const chats = await (await fetch(`${EMULATOR}/__chat?contains=${token}`)).json<any>();
    const received = chats.requests?.[0] ?? chats.chats?.[0] ?? chats[0];
    expect(received.model).toBe("emu-vision");
    expect(received.image_data_url_length).toBeLessThanOrEqual(262_144);
    expect(received.image_data_url_length).toBeGreaterThan(10_000);
  });

  it("answers 503 when no auxiliary model is configured", async () => {
    const { status, body } = await analyze({
      image: inline(small),
      session_id: uniqueToken(),
      model: { provider: "mistral", name: "mistral-large" },
    });
    expect(status).toBe(503);
    expect(expectErrorShape(body).message).toContain("auxiliary.vision");
  });
});

describe("images by URL go through the same gate as web_extract", () => {
  it("fetches a public image URL and fits it", async () => {
    const url = `http://img.example.com/pages/image.png?w=2000&h=1000&t=${uniqueToken()}`;
    const { status, body } = await analyze({ image: { url }, session_id: uniqueToken() });
    expect(status).toBe(200);
    expect(body.original).toMatchObject({ media_type: "image/png", width: 2000, height: 1000 });
    expect([body.image.width, body.image.height]).toEqual([1568, 784]);
  });

  it.each([
    [
      "a secret in the URL",
      "https://img.example.com/a.png?api_key=sk-proj-AbCdEf1234567890GhIjKlMnOpQrSt",
      422,
      "secret_in_url",
    ],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/image.png", 403, "blocked_private_address"],
    ["a private address", "http://192.168.0.10/cam.png", 403, "blocked_private_address"],
    ["a blocked site", "http://blocked.example.org/pages/image.png", 403, "blocked_by_policy"],
    ["a page that fails", "http://img.example.com/pages/image.png?[fail:404]", 502, "fetch_failed"],
    [
      "a redirect to metadata",
      `http://img.example.com/pages/redirect?to=${encodeURIComponent("http://169.254.169.254/")}`,
      403,
      "blocked_private_address",
    ],
  ])("refuses %s", async (_name, url, status, code) => {
    const response = await analyze(
      { image: { url }, session_id: uniqueToken() },
      { SECURITY_WEBSITE_BLOCKLIST: "blocked.example.org" },
    );
    expect(response.status).toBe(status);
    const error = expectErrorShape(response.body);
    expect(error.code).toBe(code);
    expect(error.message).not.toContain("sk-proj-");
  });

  it("gives the slot back when a load fails after reserving it", async () => {
    const session = uniqueToken();
    const capOne = { VISION_MAX_CALLS_PER_IMAGE: "1" };
    const junk = `http://img.example.com/pages/junk.bin?t=${session}`;
    expect((await analyze({ image: { url: junk }, session_id: session }, capOne)).status).toBe(415);
    expect((await analyze({ image: { url: junk }, session_id: session }, capOne)).status).toBe(415);
    const image = `http://img.example.com/pages/image.png?w=300&h=200&t=${session}`;
    expect((await analyze({ image: { url: image }, session_id: session }, capOne)).status).toBe(200);
    expect((await analyze({ image: { url: `${image}#again` }, session_id: session }, capOne)).status).toBe(409);
  });
});
