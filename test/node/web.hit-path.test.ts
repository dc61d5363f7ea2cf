/**
 * The pieces the cache hit's path computes once instead of per request give what the per-request
 * computation gave: a request's path without a URL parse, a remembered digest, the configured
 * tokens' digests kept per API_TOKENS value.
 */
import { describe, expect, it } from "vitest";
import { requestPath } from "../../shared/app/request-log";
import { rememberedSha256Hex, sha256Hex } from "../../shared/hash";
import { authorize } from "../../shared/http/auth";

describe("requestPath", () => {
  it("is new URL(url).pathname for every shape of request URL", () => {
    for (const url of [
      "http://127.0.0.1:8787/v1/web_search",
      "https://service.test/v1/web_search?query=x&y=%2F",
      "https://service.test/anthropic/v1/messages#frag",
      "https://service.test/",
      "https://service.test/a/b?c#d",
      "https://service.test/p%20q/%E2%82%AC?x=/y",
      "http://[::1]:8080/mcp?a=b",
      "https://service.test/x/./y/../z",
      "https://service.test/x#y?z",
    ]) {
      const serialised = new Request(url).url; // as a runtime hands it over
      expect(requestPath(serialised), url).toBe(new URL(serialised).pathname);
    }
  });
});

describe("rememberedSha256Hex", () => {
  it("gives sha256Hex's digest, the first time and again", async () => {
    for (const text of ["tavily\nweather in vegas", "", "x".repeat(5000)]) {
      const expected = await sha256Hex(text);
      expect(await rememberedSha256Hex(text)).toBe(expected);
      expect(await rememberedSha256Hex(text)).toBe(expected);
    }
  });
});

describe("authorize with the token digests kept", () => {
  it("follows API_TOKENS as it changes: a new token is taken, a removed one refused", async () => {
    await expect(authorize("Bearer one", "one,two", false)).resolves.toBeUndefined();
    await expect(authorize("Bearer two", "one,two", false)).resolves.toBeUndefined();
    await expect(authorize("Bearer three", "one,two", false)).rejects.toMatchObject({ status: 401 });
    await expect(authorize("Bearer three", "three", false)).resolves.toBeUndefined();
    await expect(authorize("Bearer one", "three", false)).rejects.toMatchObject({ status: 401 });
    await expect(authorize(null, "three", false)).rejects.toMatchObject({ status: 401 });
  });
});
