/**
 * A newcomer's first hour (issue: no surprise from README to working calls), through the real
 * Workers entry: every answer checked as the user sees it (status, code, message, bytes).
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { toBase64 } from "../../shared/media/data-url";
import { encodePng, ftypHeader, photoPixels, pngHeaderOnly } from "../fixtures/images";
import { call, callJson, expectErrorShape, imageBase64, uniqueToken } from "./helpers";

const ACCEPT = "application/json, text/event-stream";
const rpc = (body: unknown) =>
  callJson("/mcp", { body, headers: { accept: ACCEPT, "mcp-protocol-version": "2025-11-25" } });

let small: Uint8Array; // 320x200 PNG that fits as it is

beforeAll(async () => {
  small = await encodePng(photoPixels(320, 200, 7), 320, 200, 3);
});

/** A multipart upload with no other field: what `curl -F image=@file` sends. */
async function upload(bytes: Uint8Array, name: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.set("image", new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
  const request = new Request("https://x/", { method: "POST", body: form });
  const response = await call("/v1/vision_analyze", {
    raw: new Uint8Array(await request.arrayBuffer()),
    headers: { "content-type": request.headers.get("content-type")! },
  });
  return { status: response.status, body: await response.json() };
}

const text = (s: string) => new TextEncoder().encode(s);

describe("vision_analyze without a session_id", () => {
  it("gives each bad image its own status instead of a 400 about session_id", async () => {
    const cases: [string, Uint8Array, number, string, RegExp][] = [
      ["notes.txt", text("meeting notes: ship on friday\n"), 415, "unsupported_media_type", /not a supported image/],
      [
        "paper.pdf",
        text("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n"),
        415,
        "unsupported_media_type",
        /not a supported image/,
      ],
      [
        "logo.svg",
        text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'),
        415,
        "unsupported_media_type",
        /SVG/,
      ],
      ["photo.avif", ftypHeader("avif", ["avif", "mif1"]), 415, "unsupported_media_type", /AVIF/],
      ["huge.png", pngHeaderOnly(5000, 4000), 413, "image_too_large", /5000x4000/],
    ];
    for (const [name, bytes, status, code, message] of cases) {
      const answer = await upload(bytes, name);
      expect(answer.status, name).toBe(status);
      const error = expectErrorShape(answer.body);
      expect(error.code, name).toBe(code);
      expect(error.message, name).toMatch(message);
      expect(error.message, name).not.toContain("session_id");
    }
    const privateUrl = await callJson("/v1/vision_analyze", { body: { image: { url: "http://10.0.0.1/screen.png" } } });
    expect(privateUrl.status).toBe(403);
    expect(expectErrorShape(privateUrl.body).code).toBe("blocked_private_address");
  });

  it("answers a good image, not counted, and says how to have loads counted", async () => {
    for (let i = 0; i < 5; i++) {
      const { status, body } = await callJson("/v1/vision_analyze", {
        body: { image: { data: toBase64(small) }, caller: "subagent" },
      });
      expect(status).toBe(200);
      expect([body.embed_count, body.embed_cap]).toEqual([null, null]);
      expect(body.session_hint).toContain("Send session_id");
    }
    // With a session the same loads count, and the hint is gone.
    const session = await callJson("/v1/vision_analyze", {
      body: { image: { data: toBase64(small) }, caller: "subagent", session_id: uniqueToken() },
    });
    expect([session.body.embed_count, session.body.embed_cap, session.body.session_hint]).toEqual([1, 3, undefined]);
  });
});

describe("a vision answer carries the image once", () => {
  it("puts the bytes only in the provider-ready block: the body is one copy plus a little", async () => {
    const base64 = toBase64(small);
    const response = await call("/v1/vision_analyze", { body: { image: { data: base64 }, session_id: uniqueToken() } });
    const raw = await response.text();
    const body = JSON.parse(raw);
    expect(imageBase64(body)).toBe(base64);
    expect(raw.split(base64).length).toBe(2);
    expect(raw.length).toBeLessThan(base64.length + 2048);
    expect(body.image).toEqual({
      media_type: "image/png",
      width: 320,
      height: 200,
      bytes: small.byteLength,
      data_url_bytes: `data:image/png;base64,${base64}`.length,
    });
  });

  it("over MCP the bytes are the image block only", async () => {
    const { body } = await rpc({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "vision_analyze", arguments: { image: { data: toBase64(small) } } },
    });
    const [summary, image] = body.result.content;
    expect(image).toEqual({ type: "image", data: toBase64(small), mimeType: "image/png" });
    expect(summary.text).toContain("not counted: no session");
    expect(JSON.stringify(body.result.structuredContent)).not.toContain(toBase64(small).slice(0, 64));
  });
});

describe("messages that say what to do", () => {
  it('{"urls": "https://..."} says urls must be an array, once', async () => {
    const { status, body } = await callJson("/v1/web_extract", { body: { urls: "https://example.com/" } });
    expect(status).toBe(400);
    const error = expectErrorShape(body);
    expect(error.message).toContain("urls must be an array");
    expect(error.details).toHaveLength(1);
    expect(error.message).not.toContain("characters");
  });

  it('{"image": "https://..."} shows the {url} and {data} shapes', async () => {
    const { status, body } = await callJson("/v1/vision_analyze", { body: { image: "https://example.com/a.png" } });
    expect(status).toBe(400);
    const error = expectErrorShape(body);
    expect(error.message).toContain('{"url": "https://..."}');
    expect(error.message).toContain('{"data": "<base64 or a data: URL>"}');
  });

  it("an empty query is one message", async () => {
    const { status, body } = await callJson("/v1/web_search", { body: { query: "" } });
    expect(status).toBe(400);
    const error = expectErrorShape(body);
    expect(error.details).toEqual([{ path: ["query"], message: "query must not be empty" }]);
  });

  it("the 409 ends with the setting as /v1/config shows it (unset, and the cap that applied), and /v1/config states the rule", async () => {
    const session = uniqueToken();
    const load = () =>
      callJson("/v1/vision_analyze", {
        body: { image: { data: toBase64(small) }, session_id: session, caller: "subagent" },
      });
    for (let i = 0; i < 3; i++) expect((await load()).status).toBe(200);
    const refused = expectErrorShape((await load()).body);
    const config = (await callJson("/v1/config")).body;
    expect(config.vision.max_calls_per_image).toBeNull();
    expect(config.vision.max_calls_per_image_rule).toBe(
      "unset: 3 for subagents, unlimited for the main agent; 0 = unlimited",
    );
    expect(refused.message).toMatch(/\(vision\.max_calls_per_image unset: 3 for subagents; 0 = unlimited\)$/);
    const set = (await callJson("/v1/config", { vars: { VISION_MAX_CALLS_PER_IMAGE: "2" } })).body;
    expect(set.vision.max_calls_per_image_rule).toBe("2 for every caller; 0 = unlimited");
  });
});

describe("configuration mistakes surface at once", () => {
  it("/healthz is a 503 naming the key, the value and where to fix it on Workers", async () => {
    const { status, body } = await callJson("/healthz", { vars: { WEB_SEARCH_PROVIDER: "bing" } });
    expect(status).toBe(503);
    expect(body.ok).toBe(false);
    const error = expectErrorShape(body);
    expect(error.code).toBe("config_error");
    expect(error.message).toContain("web.search_provider");
    expect(error.message).toContain('"bing"');
    expect(error.message).toContain("wrangler.toml");
    expect(error.message).toContain("restart npm run dev");
  });
});

describe("GET /", () => {
  it("lists the routes and the docs as JSON, and as HTML for a browser", async () => {
    const { status, body } = await callJson("/");
    expect(status).toBe(200);
    const paths = body.routes.map((r: { path: string }) => r.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "/healthz",
        "/v1/config",
        "/v1/web_search",
        "/v1/web_extract",
        "/v1/vision_analyze",
        "/v1/context/evict",
        "/mcp",
        "/openapi.json",
        "/dashboard",
        "/v1/stats",
        "/v1/cache/purge",
        "/anthropic/*",
        "/openai/*",
      ]),
    );
    // One line per operation of the OpenAPI document, with its summary.
    const openapi = (await callJson("/openapi.json")).body;
    const operations = Object.entries(openapi.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path !== "/")
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    expect(
      body.routes.filter((r: { method: string }) => r.method !== "ANY").map((r: any) => `${r.method} ${r.path}`),
    ).toEqual(operations);
    expect(body.routes.every((r: { what: string }) => r.what.length > 10)).toBe(true);
    expect(body.docs.contract).toBe("docs/api.md");
    const page = await call("/", { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain('<a href="/dashboard">');
  });
});

describe("MCP against the spec", () => {
  it("an unknown tool is the JSON-RPC error -32602", async () => {
    const { status, body } = await rpc({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "rm_rf", arguments: {} },
    });
    expect(status).toBe(200);
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain("rm_rf");
    expect(body.error.message).toContain("web_search");
  });

  it("a request whose id is null is -32600 Invalid Request", async () => {
    const { status, body } = await rpc({ jsonrpc: "2.0", id: null, method: "tools/list" });
    expect(status).toBe(400);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
  });

  it("lists limit without zod's safe-integer bounds", async () => {
    const { body } = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const search = body.result.tools.find((t: { name: string }) => t.name === "web_search");
    expect(search.inputSchema.properties.limit).toEqual({ type: "integer", description: expect.any(String) });
    expect(JSON.stringify(body)).not.toContain("9007199254740991");
  });
});

describe("logs", () => {
  /** Every JSON line the service wrote while `run` ran, with its level. */
  async function linesDuring(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
    const spies = (["log", "warn", "error"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => {}),
    );
    try {
      await run();
      return spies.flatMap((spy) =>
        spy.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>),
      );
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  }

  it("a provider failure is one warn line with route, status, code and ms, and no query string", async () => {
    const token = uniqueToken();
    let status = 0;
    const lines = await linesDuring(async () => {
      status = (await call(`/v1/web_search?api_key=sk-live-${token}`, { body: { query: `down [fail:500] ${token}` } }))
        .status;
    });
    expect(status).toBe(502);
    expect(lines).toEqual([
      {
        level: "warn",
        event: "request",
        request_id: expect.any(String),
        method: "POST",
        route: "/v1/web_search",
        status: 502,
        code: "provider_error",
        message: "The tavily provider failed: HTTP 500. Try again later or configure another provider.",
        ms: expect.any(Number),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("a success is one info line with the cache status and the provider", async () => {
    const token = uniqueToken();
    const lines = await linesDuring(() => call("/v1/web_search", { body: { query: `logs ${token}` } }));
    expect(lines).toEqual([
      {
        level: "info",
        event: "request",
        request_id: expect.any(String),
        method: "POST",
        route: "/v1/web_search",
        status: 200,
        cache: "miss",
        provider: "tavily",
        ms: expect.any(Number),
      },
    ]);
  });
});
