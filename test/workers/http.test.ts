/**
 * The HTTP basics of api.md through the real Workers entry: one error shape for every failure,
 * body limits before parsing, content types, Unicode, request ids, auth, health and config.
 */
import { describe, expect, it } from "vitest";
import pkg from "../../package.json";
import { call, callJson, expectErrorShape, uniqueToken } from "./helpers";

describe("health and config", () => {
  it("GET /healthz answers without auth", async () => {
    const response = await callJson("/healthz", { vars: { API_TOKENS: "secret-token-1" } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: true, version: pkg.version, runtime: "workerd" });
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });

  it("GET /v1/config shows effective values after overrides and clamps, secrets only as set/null", async () => {
    const response = await callJson("/v1/config", {
      vars: { WEB_CACHE_TTL_MINUTES: "0", VISION_EMBED_TARGET_BYTES: "true", BRAVE_API_KEY: "brave-secret-value" },
    });
    expect(response.status).toBe(200);
    expect(response.body.web.cache_ttl_minutes).toBe(1);
    expect(response.body.vision.embed_target_bytes).toBe(262144);
    expect(response.body.security.allow_anonymous).toBe(true);
    expect(response.body.secrets.BRAVE_API_KEY).toBe("set");
    expect(response.body.secrets.EXA_API_KEY).toBeNull();
    expect(JSON.stringify(response.body)).not.toContain("brave-secret-value");
    expect(JSON.stringify(response.body)).not.toContain("emulator-tavily-key");
  });

  it("reads [vars.web] tables, with flat variables winning over them", async () => {
    const table = await callJson("/v1/config", { vars: { web: { cache_ttl_minutes: 45, char_limit: 999_999 } } });
    expect(table.body.web.cache_ttl_minutes).toBe(45);
    expect(table.body.web.char_limit).toBe(500_000);
    const flat = await callJson("/v1/config", {
      vars: { web: { cache_ttl_minutes: 45 }, WEB_CACHE_TTL_MINUTES: "90" },
    });
    expect(flat.body.web.cache_ttl_minutes).toBe(90);
  });

  it("names the key and value of an unusable setting in a 500 config_error", async () => {
    const response = await callJson("/v1/config", { vars: { WEB_SEARCH_PROVIDER: "bing" } });
    expect(response.status).toBe(500);
    const error = expectErrorShape(response.body);
    expect(error.code).toBe("config_error");
    expect(error.message).toContain("web.search_provider");
    expect(error.message).toContain("bing");
  });
});

describe("auth", () => {
  const tokens = { API_TOKENS: "token-alpha-123, token-beta-456" };

  it("refuses a request without a bearer token when API_TOKENS is set", async () => {
    const response = await callJson("/v1/config", { vars: tokens });
    expect(response.status).toBe(401);
    expect(expectErrorShape(response.body).code).toBe("unauthorized");
  });

  it("refuses a wrong token and accepts each configured one", async () => {
    const wrong = await call("/v1/config", { vars: tokens, headers: { authorization: "Bearer token-alpha-12" } });
    const alpha = await call("/v1/config", { vars: tokens, headers: { authorization: "Bearer token-alpha-123" } });
    const beta = await call("/v1/config", { vars: tokens, headers: { authorization: "bearer token-beta-456" } });
    expect([wrong.status, alpha.status, beta.status]).toEqual([401, 200, 200]);
  });

  it("refuses anonymous requests where allow_anonymous is off, as in deployed environments", async () => {
    const response = await callJson("/v1/web_search", {
      body: { query: "x" },
      vars: { SECURITY_ALLOW_ANONYMOUS: "false" },
    });
    expect(response.status).toBe(401);
    expect(expectErrorShape(response.body).message).toContain("API_TOKENS");
  });

  it("guards /mcp the same way", async () => {
    const response = await call("/mcp", { body: {}, vars: tokens });
    expect(response.status).toBe(401);
  });

  it("refuses an API_TOKENS of only commas as a config_error, never reading it as no tokens (open, anonymously)", async () => {
    for (const value of [",", " , ", ",,"]) {
      const response = await callJson("/v1/config", {
        vars: { API_TOKENS: value },
        headers: { authorization: "Bearer x" },
      });
      expect(response.status, value).toBe(500);
      expect(expectErrorShape(response.body).message).toContain("API_TOKENS is set but holds no token");
    }
  });

  it("takes no call from a page on another origin while it takes calls without a token (DNS rebinding included)", async () => {
    const search = (origin: string, extra: { at?: string; vars?: Record<string, unknown>; token?: string } = {}) =>
      callJson("/v1/web_search", {
        body: { query: `origin ${uniqueToken()}` },
        headers: { origin, ...(extra.token ? { authorization: `Bearer ${extra.token}` } : {}) },
        ...(extra.at ? { at: extra.at } : {}),
        ...(extra.vars ? { vars: extra.vars } : {}),
      });
    const foreign = await search("https://evil.example");
    expect(foreign.status).toBe(403);
    expect(expectErrorShape(foreign.body)).toMatchObject({ code: "forbidden" });
    expect(foreign.body.error.message).toContain("security.allowed_origins");
    const rebound = "http://rebind.attacker.example:8787";
    expect((await search(rebound, { at: rebound })).status).toBe(403);
    // Its own origin by address, an allowed one, and any page once a token is needed, pass.
    expect((await search("http://127.0.0.1:8787", { at: "http://127.0.0.1:8787" })).status).toBe(200);
    expect(
      (await search("https://app.example", { vars: { SECURITY_ALLOWED_ORIGINS: "https://app.example" } })).status,
    ).toBe(200);
    expect((await search("https://evil.example", { vars: tokens, token: "token-alpha-123" })).status).toBe(200);
  });
});

describe("one error shape for every failure", () => {
  it("404 for an unknown route", async () => {
    const response = await callJson("/v1/nope");
    expect(response.status).toBe(404);
    expect(expectErrorShape(response.body).code).toBe("not_found");
  });

  it("405 with Allow for a method the route does not take", async () => {
    const response = await callJson("/v1/web_search", { method: "GET" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
    expect(expectErrorShape(response.body).code).toBe("method_not_allowed");
    const health = await call("/healthz", { method: "DELETE" });
    expect(health.status).toBe(405);
    expect(health.headers.get("allow")).toBe("GET, HEAD");
  });

  it("415 for a body that is not JSON, any charset case accepted", async () => {
    const text = await callJson("/v1/web_search", { raw: "query=x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(expectErrorShape(text.body).code).toBe("unsupported_media_type");
    const missing = await callJson("/v1/web_search", { raw: '{"query":"x"}', headers: { "content-type": "" } });
    expect(missing.status).toBe(415);
    // JSON-based types mean another operation than the route's: only application/json is JSON here.
    for (const type of ["application/merge-patch+json", "application/vnd.api+json", "text/json"]) {
      const other = await call("/v1/web_search", { raw: '{"query":"x"}', headers: { "content-type": type } });
      expect(other.status, type).toBe(415);
    }
    const charset = await call("/v1/web_search", {
      raw: '{"query":"charset case"}',
      headers: { "content-type": "Application/JSON; Charset=UTF-8" },
    });
    expect(charset.status).toBe(200);
  });

  it("413 for a body over 1 MiB, before parsing it", async () => {
    const big = `{"query":"${"a".repeat(1024 * 1024 + 10)}"}`;
    const response = await callJson("/v1/web_search", { raw: big });
    expect(response.status).toBe(413);
    expect(expectErrorShape(response.body).code).toBe("payload_too_large");
    // Not even valid JSON: still 413, so the limit came before the parse.
    const junk = await callJson("/v1/web_search", { raw: "{".repeat(1024 * 1024 + 1) });
    expect(junk.status).toBe(413);
  });

  it("reads a body of declared length in one piece, and still refuses one over the limit whatever its header says", async () => {
    const query = `declared ${uniqueToken()}`;
    const raw = JSON.stringify({ query });
    const fits = await call("/v1/web_search", { raw, headers: { "content-length": String(raw.length) } });
    expect(fits.status).toBe(200);
    // A Request built in process can carry a header that understates its body (the network's
    // framing never lets one through): the bytes read are counted against the limit all the same.
    const big = `{"query":"${"a".repeat(1024 * 1024 + 10)}"}`;
    const understated = await callJson("/v1/web_search", { raw: big, headers: { "content-length": "100" } });
    expect(understated.status).toBe(413);
  });

  it("400 invalid_json for malformed JSON and for bytes that are not UTF-8", async () => {
    const malformed = await callJson("/v1/web_search", { raw: '{"query": "x",' });
    expect(malformed.status).toBe(400);
    expect(expectErrorShape(malformed.body).code).toBe("invalid_json");
    const latin1 = await callJson("/v1/web_search", {
      raw: new Uint8Array([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]),
    });
    expect(latin1.status).toBe(400);
    expect(expectErrorShape(latin1.body).code).toBe("invalid_json");
  });

  it("400 for a lone surrogate instead of a crash further down", async () => {
    const response = await callJson("/v1/web_search", { raw: '{"query": "abc \\ud800 def"}' });
    expect(response.status).toBe(400);
    const error = expectErrorShape(response.body);
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("query");
  });

  it("reads a gzip or deflate body, and answers any other Content-Encoding, a corrupt one and a bomb clearly", async () => {
    const packed = async (text: string | Uint8Array<ArrayBuffer>, format: CompressionFormat) =>
      new Uint8Array(
        await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream(format))).arrayBuffer(),
      );
    for (const [coding, format] of [
      ["gzip", "gzip"],
      ["x-gzip", "gzip"],
      ["deflate", "deflate"],
      ["GZIP", "gzip"],
    ] as const) {
      const query = `compressed ${uniqueToken()}`;
      const response = await callJson("/v1/web_search", {
        raw: await packed(JSON.stringify({ query }), format),
        headers: { "content-encoding": coding },
      });
      expect(response.status, coding).toBe(200);
      expect(JSON.stringify(response.body)).toContain(query);
    }
    const brotli = await callJson("/v1/web_search", { raw: '{"query":"x"}', headers: { "content-encoding": "br" } });
    expect(brotli.status).toBe(415);
    expect(expectErrorShape(brotli.body).message).toContain("Content-Encoding br");
    const twice = await callJson("/v1/web_search", {
      raw: await packed(await packed('{"query":"x"}', "gzip"), "gzip"),
      headers: { "content-encoding": "gzip, gzip" },
    });
    expect(twice.status).toBe(415);
    const corrupt = await callJson("/v1/web_search", {
      raw: new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff]),
      headers: { "content-encoding": "gzip" },
    });
    expect(corrupt.status).toBe(400);
    expect(expectErrorShape(corrupt.body).message).toContain("not valid gzip");
    // 2 MiB of spaces inflate from about 2 KiB: the route's 1 MiB limit applies to what they inflate to.
    const bomb = await packed(`{"query":"x"${" ".repeat(2 * 1024 * 1024)}}`, "gzip");
    expect(bomb.byteLength).toBeLessThan(16 * 1024);
    const refused = await callJson("/v1/web_search", { raw: bomb, headers: { "content-encoding": "gzip" } });
    expect(refused.status).toBe(413);
    expect(expectErrorShape(refused.body).code).toBe("payload_too_large");
  });

  it("400 for a JSON body that is not an object", async () => {
    const response = await callJson("/v1/web_search", { raw: "[1,2]" });
    expect(response.status).toBe(400);
    expect(expectErrorShape(response.body).code).toBe("invalid_request");
  });
});

describe("request ids", () => {
  it("echoes the caller's X-Request-Id, on errors too", async () => {
    const ok = await call("/healthz", { headers: { "x-request-id": "req-abc.123" } });
    expect(ok.headers.get("x-request-id")).toBe("req-abc.123");
    const failed = await call("/v1/nope", { headers: { "x-request-id": "req-err-9" } });
    expect(failed.headers.get("x-request-id")).toBe("req-err-9");
    // X-Edge-Request-Id is for the proxy's answers, where the provider's own id holds X-Request-Id.
    for (const response of [ok, failed, await call("/v1/web_search", { raw: "{" })])
      expect(response.headers.get("x-edge-request-id")).toBeNull();
  });

  it("makes a new one when none (or an unusable one) is given", async () => {
    const fresh = await call("/healthz");
    const bad = await call("/healthz", { headers: { "x-request-id": "has spaces and <html>" } });
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
