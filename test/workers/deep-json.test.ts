/**
 * Deep JSON (issue 8, finding 1): a body nested thousands of levels deep used to overflow the
 * stack of the recursive Unicode check and answer 500 on every JSON route. Now nesting past 256
 * levels is a 400 `invalid_request` naming the limit, and 256 levels still parse.
 */
import { describe, expect, it } from "vitest";
import { call, callJson, expectErrorShape } from "./helpers";

const nested = (levels: number, inner = "1") => "[".repeat(levels) + inner + "]".repeat(levels);
/** A field of an otherwise ordinary request nested `levels` deep in total. */
const deepField = (fields: string, levels: number) => `{${fields},"extra":${nested(levels - 1)}}`;

const ROUTES: Array<[path: string, fields: string]> = [
  ["/v1/web_search", `"query":"deep json"`],
  ["/v1/web_extract", `"urls":["https://example.com/deep"]`],
  ["/v1/vision_analyze", `"image":{"url":"https://example.com/pages/image.png"},"session_id":"deep"`],
  ["/v1/context/evict", `"format":"anthropic","messages":[]`],
];

describe("nesting deeper than 256 levels is a 400, never a crash", () => {
  it.each(ROUTES)("%s refuses 5,000 levels with invalid_request naming the limit", async (path, fields) => {
    const response = await call(path, {
      raw: deepField(fields, 5_000),
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(response.status).toBe(400);
    const error = expectErrorShape(await response.json());
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("256");
  });

  it("/mcp refuses 5,000 levels as a JSON-RPC invalid request naming the limit", async () => {
    const raw = deepField(`"jsonrpc":"2.0","id":1,"method":"tools/list"`, 5_000);
    const response = await call("/mcp", { raw, headers: { accept: "application/json, text/event-stream" } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toContain("256");
  });

  it("refuses 257 levels and accepts 256 (the limit is exact)", async () => {
    const over = await callJson("/v1/web_search", { raw: deepField(`"query":"depth limit"`, 257) });
    expect(over.status).toBe(400);
    expect(expectErrorShape(over.body).message).toContain("256 levels");
    const at = await callJson("/v1/web_search", { raw: deepField(`"query":"depth limit"`, 256) });
    // Accepted by the body parser; the schema then refuses the field it does not take (not the depth).
    expect(at.status).toBe(400);
    expect(expectErrorShape(at.body).message).not.toContain("256 levels");
    expect(expectErrorShape(at.body).message).toContain("is not a field of this request");
  });

  it("does not count brackets inside strings", async () => {
    const response = await callJson("/v1/web_search", { body: { query: `${"[".repeat(2_000)} brackets in text` } });
    expect(response.status).toBe(200);
  });

  it("still finds a lone surrogate at the bottom of a deep (allowed) body", async () => {
    const response = await callJson("/v1/web_search", { raw: `{"query":"x","extra":${nested(200, '"\\ud800"')}}` });
    expect(response.status).toBe(400);
    const error = expectErrorShape(response.body);
    expect(error.message).toContain("lone surrogate");
    expect((error.details as any[])[0].path).toEqual(["extra", ...Array.from({ length: 200 }, () => 0)]);
  });

  it("applies the same limit to a JSON field of a multipart upload", async () => {
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: "image/png" }), "x.png");
    form.set("session_id", "deep-multipart");
    form.set("model", nested(5_000));
    const request = new Request("https://service.test/v1/vision_analyze", { method: "POST", body: form });
    const response = await call("/v1/vision_analyze", {
      raw: new Uint8Array(await request.arrayBuffer()),
      headers: { "content-type": request.headers.get("content-type")! },
    });
    expect(response.status).toBe(400);
    expect(expectErrorShape(await response.json()).message).toContain("256");
  });
});
