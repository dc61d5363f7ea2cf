/**
 * The DNS side of the SSRF gate end to end in workerd (issue 18, issue 24 item 2): an answer is
 * never used past its TTL, and a resolver that cannot be used is its own error (`dns_unavailable`,
 * still refused), not a private address.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { callJson, EMULATOR, expectErrorShape, providerCalls, uniqueToken } from "./helpers";

const setDns = (entry: Record<string, unknown>) =>
  fetch(`${EMULATOR}/__dns`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(entry),
  });
/** Nothing listens on port 2 of loopback (a privileged port no test opens): the resolver cannot be reached. */
const UNREACHABLE = { SECURITY_DNS_RESOLVER_URL: "http://127.0.0.1:2/dns-query" };

afterEach(() => vi.restoreAllMocks());

describe("DNS answers are never kept past their TTL", () => {
  it("refuses a name answered public with TTL 0 and private right after, through the same resolver", async () => {
    const token = uniqueToken();
    const name = `ttl0-${token}.attacker.net`;
    await setDns({ name, A: ["93.184.215.14"], ttl: 0 });
    const first = await callJson("/v1/web_extract", { body: { urls: [`http://${name}/page`] } });
    expect(first.body.results[0].error).toBeUndefined();
    await setDns({ name, A: ["127.0.0.1"], ttl: 0 }); // a TTL-0 answer is not kept at all
    const later = await callJson("/v1/web_extract", { body: { urls: [`http://${name}/page`] } });
    expect(later.body.results[0].error.code).toBe("blocked_private_address");
    expect(later.body.results[0].error.message).toContain("127.0.0.1");
    expect(await providerCalls("tavily", name)).toBe(1);
  });
});

describe("an unreachable DoH resolver is dns_unavailable, not a private address", () => {
  it("web_extract: in-band per URL, naming the resolver and the setting, nothing paid, one log line", async () => {
    const warnings: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warnings.push(String(line)));
    const url = `https://docs.example.com/${uniqueToken()}`;
    const { status, body } = await callJson("/v1/web_extract", {
      body: { urls: [url, "http://10.0.0.1/"] },
      vars: UNREACHABLE,
    });
    expect(status).toBe(200);
    expect(body.results[0].error.code).toBe("dns_unavailable");
    // Miniflare turns the test network's refused connection into an HTTP 500 for the worker; a
    // deployed worker sees the fetch throw ("could not be reached", proven in the Node unit test).
    expect(body.results[0].error.message).toMatch(
      /^The DNS-over-HTTPS resolver 127\.0\.0\.1:2 (could not be reached|answered with an HTTP error), so the host docs\.example\.com cannot be verified as public/,
    );
    expect(body.results[0].error.message).toContain("security.dns_resolver_url (env SECURITY_DNS_RESOLVER_URL)");
    // A literal private address needs no resolver: still its own refusal.
    expect(body.results[1].error.code).toBe("blocked_private_address");
    expect(await providerCalls("tavily", url)).toBe(0);
    const lines = warnings.filter((line) => line.includes("dns_unavailable"));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "warn", event: "dns_unavailable", resolver: "127.0.0.1:2" });
    expect(lines[0]).not.toContain("at ");
  });

  it("vision_analyze: an image URL gets 503 dns_unavailable", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const { status, body } = await callJson("/v1/vision_analyze", {
      body: { image: { url: `https://img.example.com/pages/image.png?${uniqueToken()}` }, session_id: uniqueToken() },
      vars: UNREACHABLE,
    });
    expect(status).toBe(503);
    const error = expectErrorShape(body);
    expect(error.code).toBe("dns_unavailable");
    expect(error.message).toContain("security.dns_resolver_url");
  });

  it("a resolver answering HTTP 503 is dns_unavailable too", async () => {
    const name = `down-${uniqueToken()}.example.net`;
    await setDns({ name, httpStatus: 503 });
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const { body } = await callJson("/v1/web_extract", { body: { urls: [`https://${name}/`] } });
    expect(body.results[0].error.code).toBe("dns_unavailable");
    expect(body.results[0].error.message).toContain("answered with an HTTP error");
  });
});
