/**
 * A newcomer's first hour, second pass (issue 47, items 2–5): errors in our own words, one index
 * style, a field a route does not take named with the field meant, codes that say what happened,
 * one unit for `bytes`, and every configuration mistake at once. Through the real Workers entry.
 */
import { describe, expect, it } from "vitest";
import { toBase64 } from "../../shared/media/data-url";
import { encodePng, photoPixels } from "../fixtures/images";
import { callJson, expectErrorShape, uniqueToken } from "./helpers";

const ACCEPT = "application/json, text/event-stream";

async function refusal(path: string, body: unknown) {
  const answer = await callJson(path, { body });
  expect(answer.status, JSON.stringify(body)).toBe(400);
  const error = expectErrorShape(answer.body);
  expect(error.code).toBe("invalid_request");
  return error as { code: string; message: string; details: { path: (string | number)[]; message: string }[] };
}

describe("a request the route cannot take", () => {
  it("says a missing field is required in one style on every route", async () => {
    expect((await refusal("/v1/web_search", {})).message).toBe("query is required.");
    expect((await refusal("/v1/web_extract", {})).message).toBe("urls is required.");
    expect((await refusal("/v1/vision_analyze", {})).message).toMatch(/^image is required; image must be an object/);
  });

  it("never answers in the schema library's words", async () => {
    const bodies = [
      { query: 5 },
      { query: "x", limit: 1.5 },
      { query: "x".repeat(3000) },
      { query: "x", max_age: -1 },
      { query: "x", store: "no" },
    ];
    for (const body of bodies) {
      const error = await refusal("/v1/web_search", body);
      for (const detail of [error.message, ...error.details.map((d) => d.message)])
        expect(detail, JSON.stringify(body)).not.toMatch(/Invalid input|Too (big|small)|expected .* received/);
    }
    expect((await refusal("/v1/web_search", { query: "x", limit: 1.5 })).message).toBe(
      "limit must be a whole number, not 1.5.",
    );
    expect((await refusal("/v1/web_extract", { urls: ["https://example.com/"], format: "html" })).message).toBe(
      'format must be one of "markdown", "text".',
    );
  });

  it("names a field the route does not take, with the field meant", async () => {
    const typo = await refusal("/v1/web_search", { query: "weather", maxAge: 600 });
    expect(typo.message).toBe("maxAge is not a field of this request (did you mean max_age?).");
    expect((await refusal("/v1/web_search", { query: "weather", max_agee: 600 })).message).toContain(
      "did you mean max_age?",
    );
    const q = await refusal("/v1/web_search", { q: "weather" });
    expect(q.details.map((d) => d.message)).toEqual([
      "q is not a field of this request; it takes query, limit, max_age, store",
      "query is required",
    ]);
    expect(q.message).toBe(
      "q is not a field of this request; it takes query, limit, max_age, store (1 more in details).",
    );
    const nested = await refusal("/v1/context/evict", { format: "anthropic", messages: [], limits: { max_block: 3 } });
    expect(nested.message).toBe("limits.max_block is not a field of this request (did you mean limits.max_blocks?).");
  });

  it("writes a list's index one way everywhere: urls[0]", async () => {
    expect((await refusal("/v1/web_extract", { urls: [5] })).message).toBe("urls[0] must be a string, not 5.");
    expect((await refusal("/v1/web_extract", { urls: ["https://example.com/", "not a url"] })).message).toBe(
      "urls[1] is not a full http or https URL.",
    );
    const secret = await callJson("/v1/web_extract", {
      body: { urls: ["https://example.com/", "https://example.com/?api_key=sk-live-0123456789abcdef0123"] },
    });
    expect(secret.status).toBe(422);
    expect(expectErrorShape(secret.body).message).toMatch(/^urls\[1\] looks like it carries a secret/);
    expect((await refusal("/v1/cache/purge", { extract: [{ url: "nope" }] })).message).toBe(
      "extract[0].url is not a full http or https URL.",
    );
    const description = { message: 3, block: 0, text: "a chart" };
    expect(
      (await refusal("/v1/context/evict", { format: "anthropic", messages: [], descriptions: [description] })).message,
    ).toBe("descriptions[0].message is 3, but messages holds only 0.");
  });

  it("gives the MCP tool the same message as the HTTP route", async () => {
    const answer = await callJson("/mcp", {
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "web_search", arguments: { query: "weather", maxAge: 60 } },
      },
      headers: { accept: ACCEPT, "mcp-protocol-version": "2025-11-25" },
    });
    expect(answer.body.result.isError).toBe(true);
    const error = JSON.parse(answer.body.result.content[0].text).error;
    expect(error.message).toBe("maxAge is not a field of this request (did you mean max_age?).");
  });
});

describe("codes that say what happened", () => {
  it("answers a host DNS does not know as host_not_found, not as a private address", async () => {
    const extract = await callJson("/v1/web_extract", { body: { urls: [`https://${uniqueToken()}.nowhere.test/`] } });
    expect(extract.status).toBe(200);
    expect(extract.body.results[0].error.code).toBe("host_not_found");
    expect(extract.body.results[0].error.message).toContain("does not exist in DNS");
    const vision = await callJson("/v1/vision_analyze", {
      body: { image: { url: `https://${uniqueToken()}.nowhere.test/a.png` } },
    });
    expect(vision.status).toBe(422);
    expect(expectErrorShape(vision.body).code).toBe("host_not_found");
  });

  it("names the setting that opens a private address, and only where it would", async () => {
    const { body } = await callJson("/v1/web_extract", {
      body: { urls: ["http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/"] },
    });
    expect(body.results[0].error.code).toBe("blocked_private_address");
    expect(body.results[0].error.message).toContain("security.allow_private_urls");
    expect(body.results[1].error.message).not.toContain("security.allow_private_urls");
  });

  it("says image, not page, when an image cannot be fetched", async () => {
    const url = `https://img.example.com/missing-${uniqueToken()}.png`;
    const { status, body } = await callJson("/v1/vision_analyze", { body: { image: { url } } });
    expect(status).toBe(502);
    const error = expectErrorShape(body);
    expect(error.code).toBe("fetch_failed");
    expect(error.message).toMatch(/^The image at img\.example\.com could not be fetched/);
  });

  it("asks for the auxiliary model's setting that is missing, not for the one that is set", async () => {
    const png = await encodePng(photoPixels(64, 48, 3), 64, 48, 3);
    const { status, body } = await callJson("/v1/vision_analyze", {
      body: { image: { data: toBase64(png) }, model: { provider: "mistral", name: "mistral-large" } },
    });
    expect(status).toBe(503);
    const { message } = expectErrorShape(body);
    // The test environment sets AUXILIARY_VISION_BASE_URL (the emulator), not the model.
    expect(message).toContain("auxiliary.vision.model");
    expect(message).not.toContain("auxiliary.vision.base_url");
  });
});

describe("one unit for bytes", () => {
  it("gives image.bytes and original.bytes as raw bytes, and the data: URL's length as image.data_url_bytes", async () => {
    const png = await encodePng(photoPixels(2400, 1600, 5), 2400, 1600, 3);
    const { status, body } = await callJson("/v1/vision_analyze", { body: { image: { data: toBase64(png) } } });
    expect(status).toBe(200);
    const embedded = body.content[0].source.data as string;
    expect(body.original.bytes).toBe(png.byteLength);
    expect(body.image.bytes).toBe(atob(embedded).length);
    expect(body.image.data_url_bytes).toBe(`data:${body.image.media_type};base64,${embedded}`.length);
    expect(body.image.data_url_bytes).toBeLessThanOrEqual(262_144);
    expect(body.image.bytes).toBeLessThan(body.image.data_url_bytes);
  });
});

describe("configuration mistakes", () => {
  it("names every mistake at once", async () => {
    const { status, body } = await callJson("/healthz", {
      vars: { WEB_CACHE_TLL_MINUTES: "60", WEB_SEARCH_PROVIDER: "bing" },
    });
    expect(status).toBe(503);
    const { message } = body.error;
    expect(message).toContain("The configuration has 2 mistakes.");
    expect(message).toContain("WEB_CACHE_TLL_MINUTES is not a setting (did you mean WEB_CACHE_TTL_MINUTES?)");
    expect(message).toContain("web.search_provider is unusable");
    expect(message).toContain("bing");
    expect(message).toContain("WEB_CACHE_TLL_MINUTES, WEB_SEARCH_PROVIDER variables");
  });
});
