/** MCP (Streamable HTTP, JSON-RPC) and OpenAPI: the same tools and schemas as the HTTP routes. */
import { describe, expect, it } from "vitest";
import { call, callJson, providerCalls, uniqueToken } from "./helpers";

const rpc = (body: unknown, vars?: Record<string, unknown>) =>
  callJson("/mcp", { body, vars, headers: { accept: "application/json, text/event-stream" } });

describe("/mcp", () => {
  it("initializes with a supported protocol version and the tools capability", async () => {
    const { status, body } = await rpc({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    expect(status).toBe(200);
    expect(body.result.protocolVersion).toBe("2025-03-26");
    expect(body.result.capabilities.tools).toBeDefined();
    expect(body.result.serverInfo.name).toBe("edge-agent-tools");
  });

  it("accepts the initialized notification with 202 and no body", async () => {
    const response = await call("/mcp", { body: { jsonrpc: "2.0", method: "notifications/initialized" } });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
  });

  it("lists web_search with the JSON schema of its zod input", async () => {
    const { body } = await rpc({ jsonrpc: "2.0", id: "list", method: "tools/list" });
    expect(body.result.tools.map((t: any) => t.name)).toEqual(["web_search", "web_extract", "vision_analyze"]);
    const search = body.result.tools.find((t: any) => t.name === "web_search");
    expect(search.inputSchema.type).toBe("object");
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(search.inputSchema.properties.query.maxLength).toBe(2048);
    expect(search.inputSchema.properties.limit.type).toBe("integer");
  });

  it("calls web_search through the same cache as the HTTP route", async () => {
    const token = uniqueToken();
    await callJson("/v1/web_search", { body: { query: `mcp shared ${token}` } });
    const { body } = await rpc({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "web_search", arguments: { query: `mcp shared ${token}`, limit: 3 } } });
    expect(body.id).toBe(7);
    expect(body.result.isError).toBe(false);
    expect(body.result.structuredContent.cache).toBe("hit");
    expect(body.result.structuredContent.results).toHaveLength(3);
    expect(JSON.parse(body.result.content[0].text).results).toHaveLength(3);
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("calls vision_analyze and returns the fitted image as an MCP image block too", async () => {
    // A 2x1 PNG (red, blue) with right CRCs and zlib checksum: passes through as it is.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGP4z8DAwPAfAAcAAf9+CLHQAAAAAElFTkSuQmCC";
    const { body } = await rpc({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "vision_analyze", arguments: { image: { data: png }, session_id: uniqueToken() } } });
    expect(body.result.isError).toBe(false);
    expect(body.result.structuredContent.path).toBe("native");
    expect(body.result.content[1]).toEqual({ type: "image", data: png, mimeType: "image/png" });
  });

  it("reports bad tool arguments as a tool error the model can read", async () => {
    const { body } = await rpc({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "web_search", arguments: { query: "" } } });
    expect(body.result.isError).toBe(true);
    expect(body.result.structuredContent.error.code).toBe("invalid_request");
  });

  it("answers JSON-RPC errors for unknown methods, unknown tools and malformed messages", async () => {
    expect((await rpc({ jsonrpc: "2.0", id: 1, method: "nope/nope" })).body.error.code).toBe(-32601);
    expect((await rpc({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "rm_rf" } })).body.error.code).toBe(-32602);
    expect((await rpc({ hello: "world" })).body.error.code).toBe(-32600);
  });

  it("answers a batch in order", async () => {
    const { body } = await rpc([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]);
    expect(body.map((r: any) => r.id)).toEqual([1, 2]);
  });

  it("takes POST only", async () => {
    const response = await call("/mcp", { method: "GET" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });
});

describe("/openapi.json", () => {
  it("documents every tool route with its request schema", async () => {
    const { status, body } = await callJson("/openapi.json");
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    const search = body.paths["/v1/web_search"].post;
    expect(search.requestBody.content["application/json"].schema.properties.query.type).toBe("string");
    expect(search.responses["200"].content["application/json"].schema.properties.cache.enum).toEqual(["hit", "miss", "coalesced", "bypass"]);
    for (const path of ["/healthz", "/v1/config", "/v1/web_extract", "/v1/vision_analyze", "/v1/context/evict", "/mcp"]) expect(body.paths[path], path).toBeDefined();
    expect(body.paths["/v1/web_extract"].post.requestBody.content["application/json"].schema.properties.urls.maxItems).toBe(5);
  });
});
