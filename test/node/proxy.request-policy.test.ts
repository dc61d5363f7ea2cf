/**
 * What of a request may reach the provider (shared/proxy/request-policy.ts), as properties: no
 * path the proxy accepts leaves the base path, even at a gateway that decodes it again and
 * resolves its dot segments; no configured family lets a key or per-hop header through.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import { ANTHROPIC } from "../../shared/llm/anthropic.provider";
import { upstreamUrl } from "../../shared/proxy/proxy.service";
import { headerForwarder, NEVER_FORWARDED, providerPath } from "../../shared/proxy/request-policy";

const BASE = "https://gateway.example/v1/acct-1/anthropic";

/** What a gateway that decodes a path (up to 4 times) and then resolves its dot segments reaches. */
function reachedByDecodingGateway(target: string): string {
  let path = new URL(target).pathname;
  for (let round = 0; round < 4 && path.includes("%"); round++) {
    try {
      path = decodeURIComponent(path);
    } catch {
      break;
    }
  }
  return new URL(path.replaceAll("\\", "/"), "https://gateway.example").pathname;
}

const SEGMENTS = [
  "v1",
  "messages",
  "..",
  ".",
  "%2e",
  "%2E%2e",
  ".%2e",
  "%2f",
  "%2F",
  "%252f",
  "%25252F",
  "%5c",
  "%5C",
  "\\",
  "",
  "a%20b",
  "other-acct",
  "%00",
  "%",
];

describe("the path", () => {
  it("never leaves the base path, for any path the proxy accepts, even at a gateway that decodes it", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...SEGMENTS), { maxLength: 8 }), (segments) => {
        const pathname = `/anthropic/${segments.join("/")}`;
        let path: string;
        try {
          path = providerPath(ANTHROPIC, new URL(pathname, "https://service.test").pathname);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).status).toBe(400);
          return;
        }
        const target = upstreamUrl(BASE, path, "");
        expect(new URL(target).pathname.startsWith("/v1/acct-1/anthropic/")).toBe(true);
        expect(reachedByDecodingGateway(target).startsWith("/v1/acct-1/anthropic")).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it("refuses a target outside the base path, whatever built it", () => {
    expect(() => upstreamUrl(BASE, "/../../other-acct/v1/messages", "")).toThrow(AppError);
    expect(() => upstreamUrl(BASE, "/./../anthropic-other/v1/messages", "")).toThrow(AppError);
    expect(() => upstreamUrl(BASE, "@evil.example/v1/messages", "")).not.toThrow(); // a path segment, on the base's origin
    expect(upstreamUrl(BASE, "/v1/messages", "?beta=true")).toBe(`${BASE}/v1/messages?beta=true`);
  });

  it("gives a near miss its canonical path, or refuses it", () => {
    expect(providerPath(ANTHROPIC, "/anthropic/v1/messages/")).toBe("/v1/messages");
    expect(providerPath(ANTHROPIC, "/anthropic/v1/messages/count_tokens/")).toBe("/v1/messages/count_tokens");
    for (const pathname of [
      "/anthropic//v1/messages",
      "/anthropic/v1/messages//",
      "/anthropic/V1/MESSAGES",
      "/anthropicx/v1/messages",
    ])
      expect(() => providerPath(ANTHROPIC, pathname), pathname).toThrow(AppError);
  });
});

describe("request headers", () => {
  it("lets no configured name or family forward a header that never goes", () => {
    const forwards = headerForwarder(["x-*", "a*", "c*", "h*", "p*", "t*", "e*", "k*", "u*"]);
    for (const name of NEVER_FORWARDED) expect(forwards(name), name).toBe(false);
    expect(forwards("x-team")).toBe(true);
  });
});
