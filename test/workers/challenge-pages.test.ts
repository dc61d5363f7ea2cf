/**
 * Bot walls (issue 8, finding 3): a Cloudflare "Just a moment..." interstitial used to be returned
 * as the page and stored for every caller. Now every extract provider, `direct` included, answers
 * such a page with an in-band `challenge_page` error, stores nothing, and pays again next time.
 */
import { describe, expect, it } from "vitest";
import { callJson, providerCalls, uniqueToken } from "./helpers";

const VENDORS = [
  "cloudflare",
  "cloudflare-blocked",
  "hcaptcha",
  "recaptcha",
  "akamai",
  "datadome",
  "perimeterx",
] as const;
const PROVIDERS: Record<string, { vars: Record<string, string>; calls: string }> = {
  direct: { vars: { WEB_EXTRACT_PROVIDER: "direct" }, calls: "pages" },
  tavily: { vars: {}, calls: "tavily" },
  firecrawl: { vars: { WEB_EXTRACT_PROVIDER: "firecrawl", FIRECRAWL_API_KEY: "fc-emulator-key" }, calls: "firecrawl" },
  jina: { vars: { WEB_EXTRACT_PROVIDER: "jina", JINA_API_KEY: "jina-emulator-key" }, calls: "jina" },
};

const extract = (url: string, vars: Record<string, string>) =>
  callJson("/v1/web_extract", { body: { urls: [url] }, vars });

describe("a challenge page is an in-band challenge_page, never stored", () => {
  for (const [provider, { vars, calls }] of Object.entries(PROVIDERS)) {
    it.each(VENDORS)(`${provider}: [challenge:%s]`, async (vendor) => {
      const token = uniqueToken();
      const url = `https://docs.example.com/pages/wall/[challenge:${vendor}]/${token}`;
      const first = await extract(url, vars);
      const second = await extract(url, vars);
      expect(first.status).toBe(200);
      const result = first.body.results[0];
      expect(result.content).toBeUndefined();
      expect(result.error.code).toBe("challenge_page");
      expect(result.error.message).toContain("docs.example.com");
      expect(result.error.message).toContain("bot challenge");
      expect(second.body.results[0].error.code).toBe("challenge_page");
      expect(await providerCalls(calls, token)).toBe(2);
    });
  }

  it("keeps the rest of the call: other URLs are answered and stored as usual", async () => {
    const token = uniqueToken();
    const wall = `https://docs.example.com/pages/wall/[challenge:cloudflare]/${token}`;
    const page = `https://docs.example.com/pages/article?t=${token}`;
    const response = await extract(wall, { WEB_EXTRACT_PROVIDER: "direct" });
    const both = await callJson("/v1/web_extract", {
      body: { urls: [wall, page] },
      vars: { WEB_EXTRACT_PROVIDER: "direct" },
    });
    expect(response.body.results[0].error.code).toBe("challenge_page");
    expect(both.body.results[0].error.code).toBe("challenge_page");
    expect(both.body.results[1].title).toContain("Understanding Edge Caches");
    expect(both.headers.get("x-cache")).toBe("HIT=0,MISS=1");
  });

  it("lets an ordinary page with a captcha on its form through, and stores it", async () => {
    const token = uniqueToken();
    const url = `https://docs.example.com/pages/contact?t=${token}`;
    const first = await extract(url, { WEB_EXTRACT_PROVIDER: "direct" });
    const second = await extract(url, { WEB_EXTRACT_PROVIDER: "direct" });
    expect(first.body.results[0].error).toBeUndefined();
    expect(first.body.results[0].content).toContain("Write to us about caching");
    expect(second.body.results[0].cached).toBe(true);
    expect(await providerCalls("pages", token)).toBe(1);
  });

  it("still reports a plain 503 from the page as fetch_failed", async () => {
    const url = `https://docs.example.com/pages/down/[fail:503]/${uniqueToken()}`;
    const response = await extract(url, { WEB_EXTRACT_PROVIDER: "direct" });
    expect(response.body.results[0].error.code).toBe("fetch_failed");
  });
});
