/**
 * web_extract through the real Workers entry: pay once per URL, and a safety gate that runs before
 * the cache for every URL. Pages are served by the emulator: `*.example.com` names resolve (through
 * the emulated DoH resolver) to a public address and reach the emulator through the test network
 * set up in vitest.config.ts; nothing leaves the machine.
 */
import { describe, expect, it } from "vitest";
import { cacheKeyPrefix } from "../../shared/web/cache";
import { answeredTogether } from "../support/emulator-client";
import { extractJoiners } from "./flight-joiners";
import { callJson, EMULATOR, expectErrorShape, providerCalls, testEnv, uniqueToken } from "./helpers";

const extract = (urls: string[], vars?: Record<string, unknown>, format?: string) =>
  callJson("/v1/web_extract", { body: format ? { urls, format } : { urls }, vars });
const direct = { WEB_EXTRACT_PROVIDER: "direct" };
const setDns = (entry: Record<string, unknown> | Record<string, unknown>[]) =>
  fetch(`${EMULATOR}/__dns`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(entry),
  });

describe("web_extract pays once", () => {
  it("extracts the same URL twice with one provider call", async () => {
    const url = `https://docs.example.com/guide/${uniqueToken()}`;
    const first = await extract([url]);
    const second = await extract([url]);
    expect(first.status).toBe(200);
    expect(first.body.results[0]).toMatchObject({ url, cached: false, truncated: false });
    expect(first.body.results[0].content).toContain("extracted");
    expect(first.headers.get("x-cache")).toBe("HIT=0,MISS=1");
    expect(second.body.results[0].cached).toBe(true);
    expect(second.headers.get("x-cache")).toBe("HIT=1,MISS=0");
    expect(second.body.results[0].content).toBe(first.body.results[0].content);
    expect(await providerCalls("tavily", url)).toBe(1);
  });

  it("merges concurrent extracts of one URL into one provider call", async () => {
    const gate = `merge-${uniqueToken()}`;
    const url = `https://docs.example.com/slow/[gate:${gate}]/${uniqueToken()}`;
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 2, count: () => extractJoiners(url) },
      [1, 2, 3].map(() => extract([url])),
    );
    expect(answers.map((a) => a.body.results[0].cached).filter((c) => !c)).toHaveLength(1);
    expect(await providerCalls("tavily", url)).toBe(1);
  });

  it("keeps results in input order with in-band refusals, counting X-Cache per URL", async () => {
    const token = uniqueToken();
    const urls = [
      `https://a.example.com/${token}`,
      "http://10.0.0.1/",
      `https://blocked.example.org/${token}`,
      "http://169.254.169.254/latest/meta-data/",
      `https://b.example.com/${token}`,
    ];
    const { status, body, headers } = await extract(urls, { SECURITY_WEBSITE_BLOCKLIST: "blocked.example.org" });
    expect(status).toBe(200);
    expect(body.results.map((r: any) => r.url)).toEqual(urls);
    expect(body.results.map((r: any) => r.error?.code ?? "ok")).toEqual([
      "ok",
      "blocked_private_address",
      "blocked_by_policy",
      "blocked_private_address",
      "ok",
    ]);
    expect(headers.get("x-cache")).toBe("HIT=0,MISS=2");
    expect(await providerCalls("tavily", `blocked.example.org/${token}`)).toBe(0);
  });

  it("shares an entry between URLs that differ only in scheme/host case, default port and fragment", async () => {
    const token = uniqueToken();
    await extract([`HTTPS://Docs.Example.COM:443/Path/${token}?q=1#top`]);
    const again = await extract([`https://docs.example.com/Path/${token}?q=1`]);
    expect(again.body.results[0].cached).toBe(true);
    expect(await providerCalls("tavily", `/Path/${token}?q=1`)).toBe(1);
  });

  it.each([
    ["path case", "/Doc", "/doc"],
    ["repeated query key order", "/p?a=1&a=2", "/p?a=2&a=1"],
    ["query key case", "/p?x=1", "/p?X=1"],
    ["trailing slash", "/dir", "/dir/"],
  ])("never shares an entry between URLs that differ in %s", async (_name, a, b) => {
    const token = uniqueToken();
    await extract([`https://docs.example.com/${token}${a}`]);
    const other = await extract([`https://docs.example.com/${token}${b}`]);
    expect(other.body.results[0].cached).toBe(false);
    expect(await providerCalls("tavily", token)).toBe(2);
  });

  it("puts the provider and the format in the key", async () => {
    const url = `https://docs.example.com/formats/${uniqueToken()}`;
    const markdown = await extract([url]);
    const text = await extract([url], undefined, "text");
    expect(text.body.results[0].cached).toBe(false);
    expect(text.body.results[0].content).not.toContain("**");
    expect(markdown.body.results[0].content).toContain("**extracted**");
    const firecrawl = await extract([url], { FIRECRAWL_API_KEY: "fc-emulator-key" });
    expect(firecrawl.body.results[0].cached).toBe(false);
    expect(await providerCalls("firecrawl", url)).toBe(1);
  });
});

describe("the extract cache key's version", () => {
  it("stores under the current version, and never reads an entry an older version stored", async () => {
    const url = `https://docs.example.com/versions/${uniqueToken()}`;
    await extract([url]);
    const prefix = `${cacheKeyPrefix("extract")}tavily:markdown:`;
    const { keys } = await testEnv.CACHE.list({ prefix });
    const entries = await Promise.all(
      keys.map(async (k) => ({ key: k.name, entry: await testEnv.CACHE.get<any>(k.name, "json") })),
    );
    const mine = entries.find(({ entry }) => entry?.value.page.url === url)!;
    expect(mine.key.startsWith("extract:v3:tavily:markdown:")).toBe(true);

    // The key's hash is the same for both formats: an entry the v1 code left for the text format of
    // this URL sits under the v1 prefix. The current version must pay instead of serving it.
    const stale = {
      ...mine.entry,
      value: { ...mine.entry.value, page: { ...mine.entry.value.page, content: "STALE_ENTRY" } },
    };
    const hash = mine.key.slice(prefix.length);
    await testEnv.CACHE.put(`extract:v1:tavily:text:${hash}`, JSON.stringify(stale));
    const text = await extract([url], undefined, "text");
    expect(text.body.results[0]).toMatchObject({ cached: false });
    expect(text.body.results[0].content).not.toContain("STALE_ENTRY");
    expect(await providerCalls("tavily", url)).toBe(2);
    // The same entry under the current key is read: only the version kept the old one out.
    await testEnv.CACHE.put(mine.key, JSON.stringify(stale));
    const again = await extract([url]);
    expect(again.body.results[0]).toMatchObject({ cached: true, content: "STALE_ENTRY" });
  });
});

describe("what the extract cache never stores", () => {
  it("pays on every call when the cache is disabled", async () => {
    const url = `https://docs.example.com/nocache/${uniqueToken()}`;
    const off = { WEB_CACHE_ENABLED: "false" };
    const first = await extract([url], off);
    const second = await extract([url], off);
    expect([first.body.results[0].cached, second.body.results[0].cached]).toEqual([false, false]);
    expect(second.headers.get("x-cache")).toBe("HIT=0,MISS=1");
    expect(await providerCalls("tavily", url)).toBe(2);
  });

  it("does not store a failure: the next call pays again", async () => {
    const url = `https://docs.example.com/[fail:503]/${uniqueToken()}`;
    const first = await extract([url]);
    const second = await extract([url]);
    expect(first.body.results[0].error.code).toBe("provider_error");
    expect(first.body.results[0].error.message).toContain("tavily");
    expect(first.body.results[0].error.message).not.toContain("upstream-body-detail");
    expect(second.body.results[0].error.code).toBe("provider_error");
    expect(await providerCalls("tavily", url)).toBe(2);
  });

  it("does not store empty content", async () => {
    const url = `https://docs.example.com/[empty]/${uniqueToken()}`;
    await extract([url]);
    const again = await extract([url]);
    expect(again.body.results[0].cached).toBe(false);
    expect(await providerCalls("tavily", url)).toBe(2);
  });

  it("does not store exempt hosts", async () => {
    const url = `https://news.example.net/${uniqueToken()}`;
    const exempt = { WEB_CACHE_EXEMPT_HOSTS: "example.net" };
    await extract([url], exempt);
    const again = await extract([url], exempt);
    expect(again.body.results[0].cached).toBe(false);
    expect(await providerCalls("tavily", url)).toBe(2);
  });

  it("does not store local hosts, even where private URLs are allowed", async () => {
    const token = uniqueToken();
    const url = `${EMULATOR}/pages/article?t=${token}`;
    const vars = { ...direct, SECURITY_ALLOW_PRIVATE_URLS: "true" };
    const first = await extract([url], vars);
    const again = await extract([url], vars);
    expect(first.body.results[0].title).toContain("Understanding Edge Caches");
    expect(again.body.results[0].cached).toBe(false);
    expect(await providerCalls("pages", token)).toBe(2);
  });

  it("does not store a page whose redirect ends on an exempt or a local host", async () => {
    const token = uniqueToken();
    const via = (to: string) => `http://site.example.com/pages/redirect?to=${encodeURIComponent(to)}&t=${token}`;
    const exempt = via(`http://news.example.net/pages/article?t=${token}-exempt`);
    const local = via(`${EMULATOR}/pages/article?t=${token}-local`);
    const vars = { ...direct, WEB_CACHE_EXEMPT_HOSTS: "example.net", SECURITY_ALLOW_PRIVATE_URLS: "true" };
    const first = await extract([exempt, local], vars);
    expect(first.body.results.map((r: any) => r.final_url)).toEqual([
      `http://news.example.net/pages/article?t=${token}-exempt`,
      `${EMULATOR}/pages/article?t=${token}-local`,
    ]);
    const again = await extract([exempt, local], vars);
    expect(again.body.results.map((r: any) => r.cached)).toEqual([false, false]);
    // Each call fetches the redirect and the page (both carry the marker): stored, the second call would fetch none.
    expect(await providerCalls("pages", `${token}-exempt`)).toBe(4);
    expect(await providerCalls("pages", `${token}-local`)).toBe(4);
  });

  it("does not store a page of a name that resolves to a private address, where private URLs are allowed", async () => {
    const token = uniqueToken();
    const name = `intranet-${token}.example.com`;
    await setDns({ name, A: ["10.0.0.5"] });
    const vars = { SECURITY_ALLOW_PRIVATE_URLS: "true" };
    await extract([`https://${name}/wiki`], vars);
    const again = await extract([`https://${name}/wiki`], vars);
    expect(again.body.results[0].cached).toBe(false);
    expect(await providerCalls("tavily", name)).toBe(2);
  });

  it("does not store a page a hosted extractor ended on a signed URL (the next caller would get the credential)", async () => {
    const url = `https://docs.example.com/${uniqueToken()}/[final-signed]`;
    const firecrawl = { FIRECRAWL_API_KEY: "fc-emulator-key" };
    const first = await extract([url], firecrawl);
    expect(first.body.results[0].final_url).toContain("X-Amz-Signature=");
    const again = await extract([url], firecrawl);
    expect(again.body.results[0].cached).toBe(false);
    expect(await providerCalls("firecrawl", url)).toBe(2);
  });

  it("checks a hosted extractor's final URL on the call that paid, as on a hit", async () => {
    const url = `https://docs.example.com/${uniqueToken()}/[final-host:moved.example.org]`;
    const vars = { FIRECRAWL_API_KEY: "fc-emulator-key", SECURITY_WEBSITE_BLOCKLIST: "moved.example.org" };
    const first = await extract([url], vars);
    expect(first.body.results[0].error?.code).toBe("blocked_by_policy");
    const again = await extract([url], vars);
    expect(again.body.results[0].error?.code).toBe("blocked_by_policy");
  });

  it("returns a text/plain page as it is, in either format: no markup read in it, no charset taken from it", async () => {
    const url = `http://site.example.com/pages/text?t=${uniqueToken()}`;
    const expected = 'Plain text page: 2*3*4, __init__.py, [x](y) and <meta charset="iso-8859-1"> café.\nSecond line.';
    for (const format of ["markdown", "text"]) {
      const { body } = await extract([url], direct, format);
      expect(body.results[0].content, format).toBe(expected);
    }
  });

  it("keeps one caller's URL fragment out of what the next caller is served", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/article?t=${token}`;
    const first = await extract([`${url}#alice-private-note`], direct);
    const second = await extract([`${url}#bob`], direct);
    expect(second.body.results[0].cached).toBe(true);
    expect(first.body.results[0].url).toBe(`${url}#alice-private-note`);
    expect([first.body.results[0].final_url, second.body.results[0].final_url]).toEqual([url, url]);
    expect(await providerCalls("pages", token)).toBe(1);
  });

  it("returns a huge page truncated (head and tail) and does not store it", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/huge?chars=2100000&t=${token}`;
    const first = await extract([url], direct);
    const result = first.body.results[0];
    expect(result.truncated).toBe(true);
    expect(result.content.length).toBeLessThanOrEqual(15_000);
    expect(result.content).toContain("characters omitted");
    const again = await extract([url], direct);
    expect(again.body.results[0].cached).toBe(false);
    expect(await providerCalls("pages", token)).toBe(2);
  });

  it("never stores a conversion the reader cut at its 2.5 M-character cap, even with web.max_page_chars above it", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/huge?chars=3000000&t=${token}`;
    const vars = { ...direct, WEB_MAX_PAGE_CHARS: "10000000" };
    const first = await extract([url], vars);
    const again = await extract([url], vars);
    expect(first.body.results[0]).toMatchObject({ cached: false, truncated: true });
    expect(again.body.results[0]).toMatchObject({ cached: false, truncated: true });
    expect(await providerCalls("pages", token)).toBe(2);
  });

  it("stores a long page under web.max_page_chars, and truncates the hit the same way", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/huge?chars=40000&t=${token}`;
    const first = await extract([url], direct);
    const again = await extract([url], direct);
    expect(first.body.results[0].truncated).toBe(true);
    expect(again.body.results[0]).toMatchObject({ cached: true, truncated: true });
    expect(again.body.results[0].content).toBe(first.body.results[0].content);
    expect(await providerCalls("pages", token)).toBe(1);
  });
});

describe("the direct provider and redirects", () => {
  it("converts the page to markdown without navigation and scripts", async () => {
    const url = `http://site.example.com/pages/article?t=${uniqueToken()}`;
    const { body } = await extract([url], direct);
    const page = body.results[0];
    expect(page.title).toContain("Understanding Edge Caches");
    expect(page.content).toMatch(/^# Understanding Edge Caches/m);
    expect(page.content).not.toContain("window.analytics");
    expect(page.final_url).toBe(url);
  });

  it("reads a page wrapped whole in one <form> (ASP.NET WebForms) as its article, without view state, and stores it", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/webforms?t=${token}`;
    const first = (await extract([url], direct)).body.results[0];
    expect(first.content).toMatch(
      /^# Annual water quality report 2026\n\nPublished 1 December 2026\n\nThe board's annual report finds/,
    );
    expect(first.content).toContain("| Nitrate | 4.1 mg/L | 10 mg/L |");
    for (const chrome of ["__VIEWSTATE", "Services and fees", "Search the board site", "All rights reserved"])
      expect(first.content).not.toContain(chrome);
    const second = (await extract([url], direct)).body.results[0];
    expect(second).toMatchObject({ cached: true, content: first.content });
    expect(await providerCalls("pages", token)).toBe(1);
  });

  it("keeps the resolver's answers across direct fetches: a second page on the same host asks DNS nothing", async () => {
    const host = `pool-${uniqueToken()}.example.com`;
    const first = await extract([`http://${host}/pages/article?n=1`], direct);
    expect(first.body.results[0].content).toContain("Understanding Edge Caches");
    const asked = await providerCalls("dns", host);
    expect(asked).toBeGreaterThan(0);
    const second = await extract([`http://${host}/pages/article?n=2`], direct);
    expect(second.body.results[0].content).toContain("Understanding Edge Caches");
    expect(await providerCalls("dns", host)).toBe(asked);
  });

  it("follows a relative redirect that stays public", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/redirect?to=${encodeURIComponent(`/pages/article?t=${token}`)}`;
    const { body } = await extract([url], direct);
    expect(body.results[0].final_url).toBe(`http://site.example.com/pages/article?t=${token}`);
    expect(body.results[0].content).toContain("Understanding Edge Caches");
  });

  it.each([
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/", "blocked_private_address"],
    ["a private address", "http://10.1.2.3/admin", "blocked_private_address"],
    ["loopback by name", "http://localhost:8080/", "blocked_private_address"],
    ["a blocked domain", "http://evil.example.org/pages/article", "blocked_by_policy"],
  ])("refuses a redirect to %s", async (_name, to, code) => {
    const url = `http://site.example.com/pages/redirect?to=${encodeURIComponent(to)}&t=${uniqueToken()}`;
    const { body } = await extract([url], { ...direct, SECURITY_WEBSITE_BLOCKLIST: "evil.example.org" });
    expect(body.results[0].error.code).toBe(code);
  });

  it("refuses a redirect loop and more than 5 hops, and follows 5", async () => {
    const token = uniqueToken();
    const { body } = await extract(
      [
        `http://site.example.com/pages/loop?t=${token}`,
        `http://site.example.com/pages/hops?n=6&t=${token}`,
        `http://site.example.com/pages/hops?n=5&t=${token}`,
      ],
      direct,
    );
    expect(body.results[0].error.code).toBe("fetch_failed");
    expect(body.results[0].error.message).toContain("loop");
    expect(body.results[1].error.code).toBe("fetch_failed");
    expect(body.results[2].content).toContain("Understanding Edge Caches");
  });

  it("checks the stored final URL again on a cache hit", async () => {
    const token = uniqueToken();
    const url = `http://site.example.com/pages/redirect?to=${encodeURIComponent(`http://moved.example.com/pages/article?t=${token}`)}&t=${token}`;
    const first = await extract([url], direct);
    expect(first.body.results[0].final_url).toContain("moved.example.com");
    const after = await extract([url], { ...direct, SECURITY_WEBSITE_BLOCKLIST: "moved.example.com" });
    expect(after.body.results[0].error.code).toBe("blocked_by_policy");
  });

  it("reports a page that is not text as unsupported_content", async () => {
    const { body } = await extract([`http://site.example.com/pages/image.png?t=${uniqueToken()}`], direct);
    expect(body.results[0].error.code).toBe("unsupported_content");
  });
});

describe("SSRF: refused before any cache lookup or provider call", () => {
  const ODD_FORMS = [
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://0x7f000001/",
    "http://127.1/",
    "http://127.0.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::127.0.0.1]/",
    "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://[2002:7f00:1::]/",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[fd00:ec2::254]/",
    "http://169.254.169.254/",
    "http://169.254.170.2/v2/credentials",
    "http://100.100.100.200/latest/meta-data/",
    "http://192.0.0.192/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://198.18.0.1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://240.0.0.1/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://foo.localhost/",
    "http://printer.local/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/",
    "http://intranet/",
    "http://%31%32%37.0.0.1/",
    "http://127.0.0.1.nip.io.localhost/",
  ];

  it(`refuses all ${ODD_FORMS.length} odd forms in-band without reaching the provider`, async () => {
    expect(ODD_FORMS.length).toBeGreaterThanOrEqual(40);
    const token = uniqueToken();
    for (let i = 0; i < ODD_FORMS.length; i += 5) {
      const batch = ODD_FORMS.slice(i, i + 5).map((u) => `${u}${u.endsWith("/") ? "" : "/"}${token}`);
      const { status, body } = await extract(batch);
      expect(status).toBe(200);
      for (const [j, result] of body.results.entries()) {
        expect(result.error?.code, `${batch[j]} should be refused`).toBe("blocked_private_address");
      }
    }
    expect(await providerCalls("tavily", token)).toBe(0);
  });

  it("keeps metadata refused even when private URLs are allowed", async () => {
    const { body } = await extract(
      ["http://169.254.169.254/latest/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/"],
      { SECURITY_ALLOW_PRIVATE_URLS: "true" },
    );
    expect(body.results.map((r: any) => r.error?.code)).toEqual([
      "blocked_private_address",
      "blocked_private_address",
      "blocked_private_address",
    ]);
  });

  it("refuses names whose DNS answers are not all public, and names that do not resolve", async () => {
    const token = uniqueToken();
    await setDns([
      { name: `loop-${token}.attacker.net`, A: ["127.0.0.1"] },
      { name: `mixed-${token}.attacker.net`, A: ["93.184.215.14", "10.0.0.7"] },
      { name: `v6-${token}.attacker.net`, AAAA: ["::1"] },
      { name: `meta-${token}.attacker.net`, A: ["169.254.169.254"] },
    ]);
    const urls = [
      `http://loop-${token}.attacker.net/`,
      `http://mixed-${token}.attacker.net/`,
      `http://v6-${token}.attacker.net/`,
      `http://nx-${token}.attacker.net/`,
      `http://meta-${token}.attacker.net/`,
    ];
    const { body } = await extract(urls);
    expect(body.results.map((r: any) => r.error?.code)).toEqual([
      "blocked_private_address",
      "blocked_private_address",
      "blocked_private_address",
      "host_not_found",
      "blocked_private_address",
    ]);
    expect(await providerCalls("tavily", token)).toBe(0);
  });

  it("refuses on a cache hit too: an entry stored before a name turned private is not served", async () => {
    const token = uniqueToken();
    const name = `rebind-${token}.attacker.net`;
    await setDns({ name, A: ["93.184.215.14"] });
    const first = await extract([`http://${name}/page`]);
    expect(first.body.results[0].content).toBeTruthy();
    await setDns({ name, A: ["10.0.0.9"] });
    // The isolate's DNS cache may still hold the public answer; a fresh isolate config would not.
    const later = await extract([`http://${name}/page`], {
      SECURITY_DNS_RESOLVER_URL: `${EMULATOR}/dns-query?fresh=${token}`,
    });
    expect(later.body.results[0].error?.code).toBe("blocked_private_address");
    expect(await providerCalls("tavily", name)).toBe(1);
  });
});

describe("secrets in URLs refuse the whole call", () => {
  const SECRETS = [
    "https://api.example.com/v1?api_key=sk-proj-AbCdEf1234567890GhIjKlMnOpQrSt",
    "https://example.com/?key=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "https://example.com/callback?access_token=ya29.A0ARrdaM-Xy12Zq9LmNoPq",
    "https://example.com/repo?token=ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "https://example.com/pat/github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "https://example.com/?aws=AKIAIOSFODNN7EXAMPLE",
    "https://maps.example.com/api?key=AIzaSyD-1234567890abcdefghijklmnopqrs",
    "https://example.com/hook?t=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "https://example.com/pay?k=sk_live_51H8abcdefghijklmnopqrstuv",
    "https://example.com/search?auth=tvly-AbCdEf1234567890GhIjKlMn",
    "https://example.com/scrape?fc=fc-1234567890abcdef1234567890abcdef",
    "https://example.com/model?hf=hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "https://example.com/?jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "https://example.com/download?X-Amz-Signature=4f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a",
    "https://example.com/?client_secret=Zx9-Qw8_Er7Ty6Ui5Op4As3Df",
    "https://example.com/?password=Tr0ub4dor%263xKq9",
    "https://admin:S3cr3tP4ssw0rd@example.com/",
    "https://example.com/?api_key=sk%2Dproj%2DAbCdEf1234567890GhIjKlMnOpQrSt",
    "https://example.com/?q=sk%252Dproj%252DAbCdEf1234567890GhIjKlMnOpQrSt",
    "https://example.com/?apikey=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "https://example.com/?signature=c2lnbmF0dXJlLXZhbHVlLTEyMzQ1Njc4OTA",
  ];
  const ORDINARY = [
    "https://docs.example.com/docs/api_key-rotation",
    "https://example.com/search?q=token",
    "https://example.com/list?sort=password",
    "https://www.example.com/package/sk-ui-components",
    "https://example.com/org/repo/blob/main/token.ts",
    "https://example.com/login?token=",
    "https://example.com/page?page_token=next",
  ];

  it(`refuses each of ${SECRETS.length} URLs with 422 secret_in_url, echoing nothing and paying nothing`, async () => {
    expect(SECRETS.length).toBeGreaterThanOrEqual(20);
    for (const secretUrl of SECRETS) {
      const token = uniqueToken();
      const { status, body } = await extract([`https://docs.example.com/ok/${token}`, secretUrl]);
      expect(status, secretUrl).toBe(422);
      const error = expectErrorShape(body);
      expect(error.code).toBe("secret_in_url");
      // The message never echoes the URL or the credential in it.
      expect(JSON.stringify(body)).not.toContain(secretUrl.slice(-12));
      expect(JSON.stringify(body)).not.toContain("example.com");
      expect(await providerCalls("tavily", token)).toBe(0);
    }
  });

  it(`allows ${ORDINARY.length} ordinary URLs that only look like they mention credentials`, async () => {
    for (const url of ORDINARY) {
      const { status, body } = await extract([url]);
      expect(status, url).toBe(200);
      expect(body.results[0].error, url).toBeUndefined();
    }
  });
});

describe("web_extract input", () => {
  it("refuses 0 or 6 URLs, a URL that is not absolute, and another scheme with 400", async () => {
    expect((await extract([])).status).toBe(400);
    expect((await extract(Array(6).fill("https://example.com/"))).status).toBe(400);
    const relative = await extract(["/just/a/path"]);
    expect(relative.status).toBe(400);
    expect((expectErrorShape(relative.body).details as any[])[0].path).toEqual(["urls", 0]);
  });

  it.each(["ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)", "http://"])(
    "refuses %s with 400 before any fetch",
    async (url) => {
      const { status, body } = await extract(["https://docs.example.com/fine", url]);
      expect(status).toBe(400);
      expect((expectErrorShape(body).details as any[])[0].path).toEqual(["urls", 1]);
    },
  );

  it("answers 503 when the configured extract provider has no key", async () => {
    const { status, body } = await extract(["https://example.com/"], { WEB_EXTRACT_PROVIDER: "firecrawl" });
    expect(status).toBe(503);
    expect(expectErrorShape(body).message).toContain("FIRECRAWL_API_KEY");
  });
});
