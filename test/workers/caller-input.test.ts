/**
 * Caller input the routes must take as the caller's, through the real Workers entry: one API
 * token's repeat-embed counter is never another token's under the same session id (the eviction
 * memory's twin is in evict.test.ts); a malformed MCP tools/call is -32602 Invalid params; a
 * multipart text field is text unless it is one of the JSON fields.
 */
import { describe, expect, it } from "vitest";
import { callJson, uniqueToken } from "./helpers";

/** A 2x1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGP4z8DAwPAfAAcAAf9+CLHQAAAAAElFTkSuQmCC";
const TOKENS = { API_TOKENS: "tok-alice-0123456789,tok-bob-9876543210" };
const alice = { authorization: "Bearer tok-alice-0123456789" };
const bob = { authorization: "Bearer tok-bob-9876543210" };

describe("sessions are kept apart by caller", () => {
  it("vision: another API token's loads under the same session_id do not use up my repeat cap", async () => {
    const session = `agent-${uniqueToken()}`;
    const vars = { ...TOKENS, VISION_MAX_CALLS_PER_IMAGE: "1" };
    const body = { image: { data: PNG }, session_id: session };
    const a = await callJson("/v1/vision_analyze", { body, vars, headers: alice });
    expect(a.status).toBe(200);
    expect(a.body.embed_count).toBe(1);
    const b = await callJson("/v1/vision_analyze", { body, vars, headers: bob });
    // Bob has never loaded this image; he should get his first load, not Alice's 409.
    expect([b.status, b.body.embed_count ?? b.body.error?.code]).toEqual([200, 1]);
  });
});

describe("MCP: a malformed tools/call is the caller's error, not ours", () => {
  it("answers tools/call params that fail the CallToolRequest schema with -32602 Invalid params, not -32603 Internal error", async () => {
    const ACCEPT = "application/json, text/event-stream";
    for (const params of [{ name: "vision_analyze", arguments: [1, 2] }, { name: 5 }, undefined]) {
      const { status, body } = await callJson("/mcp", {
        body: { jsonrpc: "2.0", id: 9, method: "tools/call", ...(params ? { params } : {}) },
        headers: { accept: ACCEPT, "mcp-protocol-version": "2025-11-25" },
      });
      expect(status).toBeLessThan(500);
      expect([JSON.stringify(params), body.error?.code]).toEqual([JSON.stringify(params), -32602]);
    }
  });
});

describe("multipart text fields", () => {
  it("takes a question or a session_id that happens to look like JSON as text", async () => {
    const form = new FormData();
    form.set("image", new Blob([Uint8Array.from(atob(PNG), (c) => c.charCodeAt(0))], { type: "image/png" }), "a.png");
    form.set("question", "[1, 2]");
    form.set("session_id", `[${Date.now()}]`);
    const request = new Request("https://x/", { method: "POST", body: form });
    const raw = new Uint8Array(await request.arrayBuffer());
    const { status, body } = await callJson("/v1/vision_analyze", {
      raw,
      headers: { "content-type": request.headers.get("content-type")! },
    });
    expect([status, body.error?.message]).toEqual([200, undefined]);
  });
});
