/**
 * A tool's answer is built with all its headers at once (shared/app/app.ts, `builtJson`): the
 * request id (the caller's, or a new one), the tool's own headers, the JSON type; nothing is
 * added after it, and no X-Edge-Request-Id (that is for the proxy's answers).
 */
import { describe, expect, it } from "vitest";
import { call, uniqueToken } from "./helpers";

describe("a tool answer's headers", () => {
  it("a search, paid then from the cache: the caller's id, X-Cache, Age and the JSON type", async () => {
    const query = `tool answer headers ${uniqueToken()}`;
    for (const [id, cache] of [
      ["req-miss.1", "MISS"],
      ["req-hit.2", "HIT"],
    ] as const) {
      const response = await call("/v1/web_search", { body: { query }, headers: { "x-request-id": id } });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-request-id")).toBe(id);
      expect(response.headers.get("x-edge-request-id")).toBeNull();
      expect(response.headers.get("x-cache")).toBe(cache);
      expect(response.headers.get("age")).toMatch(/^\d+$/);
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(((await response.json()) as { cache: string }).cache).toBe(cache.toLowerCase());
    }
  });

  it("without a usable id from the caller, a new one", async () => {
    for (const headers of [{}, { "x-request-id": "has spaces <and> more" }] as Record<string, string>[]) {
      const response = await call("/v1/web_search", { body: { query: `fresh id ${uniqueToken()}` }, headers });
      expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers.get("x-edge-request-id")).toBeNull();
    }
  });
});
