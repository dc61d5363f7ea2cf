/**
 * Secrets in URLs (issue 8, findings 4 and 5; issue 18's misses and false positives), end to end in workerd: short and plain values of
 * credential-named parameters and the vendor shapes we had no rule for used to be sent to the
 * provider and cached; pagination cursors, SKUs and placeholders were refused; and a crafted 8 KB
 * URL took seconds to scan. Now each refusal is a 422 with no provider call, the ordinary URLs
 * pass, and a crafted URL costs about what a plain one does.
 */
import { describe, expect, it } from "vitest";
import { CRAFTED_8K_URLS, PLAIN_8K_URL } from "../fixtures/crafted-urls";
import { assertNoSecretInUrls } from "../../shared/safety/gate";
import { callJson, expectErrorShape, providerCalls, uniqueToken } from "./helpers";

// Built from parts so no scanner mistakes this file for a leaked credential.
const run = (n: number, seed = 7) =>
  Array.from({ length: n }, (_, i) => "aB3xK9mQ2pL7vN4tR8sW1zY6cD5fG0hJ"[(i * seed + 3) % 32]).join("");
const hex = (n: number) => Array.from({ length: n }, (_, i) => "0123456789abcdef"[(i * 7 + 5) % 16]).join("");

const REFUSED = [
  "https://docs.example.com/login?password=hunter2",
  "https://docs.example.com/login?password=correcthorsebatterystaple",
  "https://docs.example.com/?token=a1b2c3d4e5",
  "https://docs.example.com/?access_token=abc123",
  "https://docs.example.com/?auth=dXNlcjpwYXNz",
  `https://docs.example.com/?aws_secret_access_key=${run(40)}`,
  `https://docs.example.com/x/glpat-${run(20)}`,
  `https://docs.example.com/x/gldt-${run(20, 3)}`,
  `https://docs.example.com/x/glptt-${hex(40)}`,
  `https://docs.example.com/?w=whsec_${run(32)}`,
  `https://docs.example.com/?c=GOCSPX-${run(28)}`,
  `https://api.example.com/bot123456789:AA${run(33)}/getMe`,
  `https://discord.com/api/webhooks/123456789012345678/${run(68)}`,
  `https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/${run(24)}`,
  `https://docs.example.com/?p=pypi-AgEIcHlwaS5vcmc${run(60)}`,
  `https://docs.example.com/shpat_${hex(32)}`,
  `https://docs.example.com/?d=dop_v1_${hex(64)}`,
  `https://docs.example.com/?c=DefaultEndpointsProtocol=https;AccountName=a;AccountKey=${run(86)}==`,
  // sk-… percent-encoded five times over: more than the old decoder unwrapped.
  `https://docs.example.com/?q=${[...`sk-${run(48)}`].map((c) => `%25252525${c.charCodeAt(0).toString(16)}`).join("")}`,
  // Issue 18: a vendor prefix with a low-entropy body, a short hex key, a bot token whose secret
  // part does not start with "A", an OAuth authorization code in Google's and GitHub's shapes.
  `https://docs.example.com/?k=sk-${"Q".repeat(30)}`,
  `https://api.example.com/v2/data?key=${hex(16)}`,
  `https://api.telegram.org/bot1234567890:Zq${run(33)}/getUpdates`,
  `https://app.example.com/oauth/callback?code=4/0A${run(60)}&scope=email`,
  `https://app.example.com/auth/github/callback?code=${hex(20)}&state=${run(16)}`,
];

const ALLOWED = [
  "https://docs.example.com/items?pagination_token=eyJvZmZzZXQiOjEwMH0abc123XYZ",
  "https://docs.example.com/items?page_token=CAoQAAabcdEF12345678&next_token=Zm9vYmFyMTIzNDU2Nzg5",
  "https://docs.example.com/items?pageToken=Q0FvUUFBYWJjZEVGMTIzNDU2&cursor=abc123def456ghi789",
  "https://shop.example.com/product?key=SKU2024BLUE42XL",
  "https://api.example.com/v1?api_key=YOUR_API_KEY",
  "https://api.example.com/planetary/apod?api_key=DEMO_KEY",
  // Issue 18: a crypto token's symbol, a short word under a credential name.
  "https://finance.example.com/markets?token=ERC20&chain=eth",
  "https://swap.example.com/?fromToken=USDC&toToken=WETH",
  "https://news.example.com/tech/sk-hynix-memory-chip-prices-rise-in-2024",
];

const extract = (urls: string[]) => callJson("/v1/web_extract", { body: { urls } });

describe("credential-named parameters and vendor shapes refuse the whole call", () => {
  it.each(REFUSED.map((url, i) => [i, url]))("refuses #%i with 422 secret_in_url, paying nothing", async (_i, url) => {
    const token = uniqueToken();
    const { status, body } = await extract([`https://docs.example.com/ok/${token}`, url as string]);
    expect(status).toBe(422);
    const error = expectErrorShape(body);
    expect(error.code).toBe("secret_in_url");
    expect(JSON.stringify(body)).not.toContain((url as string).slice(-10));
    expect(await providerCalls("tavily", token)).toBe(0);
  });

  it.each(ALLOWED)("lets %s through to the provider", async (url) => {
    const { status, body } = await extract([url]);
    expect(status, url).toBe(200);
    expect(body.results[0].error, url).toBeUndefined();
  });
});

describe("the secret scan on crafted 8 KB URLs (their speed against a plain one is the gate bench's: npm run bench -- gate)", () => {
  it.each(CRAFTED_8K_URLS)("%s: passes the URL itself, and finds a secret in the URL beside it", (_, url) => {
    expect(() => assertNoSecretInUrls([url])).not.toThrow();
    expect(() => assertNoSecretInUrls([url, `https://docs.example.com/?api_key=${run(24)}`])).toThrow(/secret/);
  });

  it("passes the plain 8 KB URL", () => {
    expect(() => assertNoSecretInUrls([PLAIN_8K_URL])).not.toThrow();
  });

  it("refuses a crafted URL's own secret through the route, at the end of 8 KB", async () => {
    const url = `${CRAFTED_8K_URLS[0]![1].slice(0, 8000)}?token=${run(12)}`;
    const { status, body } = await extract([url]);
    expect(status).toBe(422);
    expect(expectErrorShape(body).code).toBe("secret_in_url");
  });
});
