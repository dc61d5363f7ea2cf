import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import type { DnsResolver } from "../../shared/ports";
import {
  assertAllowedByPolicy,
  assertNoSecretInUrls,
  assertSsrfSafe,
  gateUrl,
  normalizeUrlForCache,
} from "../../shared/safety/gate";
import { hostMatchesList } from "../../shared/safety/host-list";
import { createDnsResolver } from "../../shared/safety/dns";
import { type RunningEmulator, startEmulator } from "../emulator/server";
import { emulatorCalls, postJson, uniqueToken } from "../support/emulator-client";

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator();
  // Public names outside the emulated example.com/.org/.net internet, for the blocklist cases.
  await postJson(`${emulator.url}/__dns`, [
    { name: "ads.tracker.example", A: ["93.184.215.14"] },
    { name: "eviltracker.example", A: ["93.184.215.14"] },
  ]);
});

afterAll(() => emulator?.close());

/** The service's resolver, asking the emulator's DNS-over-HTTPS (a fresh cache each time). */
const dohResolver = (): DnsResolver =>
  createDnsResolver({ url: `${emulator.url}/dns-query`, fetch, clock: Date.now, timeoutMs: 5000 });

async function codeOf(work: Promise<unknown> | (() => void)): Promise<string> {
  try {
    if (typeof work === "function") work();
    else await work;
    return "ok";
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe("hostMatchesList", () => {
  const cases: Array<[host: string, patterns: string[], expected: boolean]> = [
    ["mysite.dev", ["mysite.dev"], true],
    ["a.mysite.dev", ["mysite.dev"], true],
    ["a.b.mysite.dev", ["mysite.dev"], true],
    ["evilmysite.dev", ["mysite.dev"], false],
    ["mysite.dev.evil.com", ["mysite.dev"], false],
    ["example.com", ["*.example.com"], false],
    ["www.example.com", ["*.example.com"], true],
    ["deep.www.example.com", ["*.example.com"], true],
    ["WWW.Example.COM", ["example.com"], true],
    ["example.com.", ["example.com"], true],
    ["example.com", ["Example.COM."], true],
    ["example.com", [".example.com"], true],
    ["example.org", ["example.com", "*.example.net"], false],
    ["example.org", [], false],
    ["example.org", ["", "   "], false],
    ["example.com", ["https://example.com/some/path"], true],
    ["xn--bcher-kva.example", ["bücher.example"], true],
    ["10.0.0.1", ["10.0.0.1"], true],
    ["110.0.0.1", ["10.0.0.1"], false],
    ["[::1]", ["::1"], true],
    // An address in any spelling that reaches it: IPv4-mapped, NAT64, 6to4; IPv6 in any form.
    [new URL("http://[::ffff:1.2.3.4]/").hostname, ["1.2.3.4"], true],
    ["[64:ff9b::102:304]", ["1.2.3.4"], true],
    ["[2002:102:304::1]", ["1.2.3.4"], true],
    ["1.2.3.4", ["::ffff:1.2.3.4"], true],
    ["[2001:db8::1]", ["2001:DB8:0:0::1"], true],
    ["[::ffff:102:305]", ["1.2.3.4"], false],
    ["1.2.3.4", ["2.3.4"], false],
  ];
  it.each(cases)("%s against %j is %s", (host, patterns, expected) => {
    expect(hostMatchesList(host, patterns)).toBe(expected);
  });

  it("never matches a host that merely ends with the pattern's text (label-aware)", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9]{1,10}$/),
        fc.stringMatching(/^[a-z0-9]{1,10}\.[a-z]{2,5}$/),
        (prefix, domain) => {
          expect(hostMatchesList(`${prefix}${domain}`, [domain])).toBe(false);
          expect(hostMatchesList(`${prefix}.${domain}`, [domain])).toBe(true);
        },
      ),
    );
  });
});

describe("normalizeUrlForCache", () => {
  const same: Array<[string, string]> = [
    ["HTTP://Example.COM:80/a#x", "http://example.com/a"],
    ["https://EXAMPLE.com:443/a?b=1", "https://example.com/a?b=1"],
    ["http://example.com/a#", "http://example.com/a"],
    ["http://example.com", "http://example.com/"],
  ];
  const different: Array<[string, string]> = [
    ["http://example.com/A", "http://example.com/a"],
    ["http://example.com/?a=1&a=2", "http://example.com/?a=2&a=1"],
    ["http://example.com/?x=1", "http://example.com/?X=1"],
    ["http://example.com:8080/a", "http://example.com/a"],
    ["https://example.com/a", "http://example.com/a"],
    ["http://example.com/a?", "http://example.com/a?q"],
    ["http://example.com/a%2Fb", "http://example.com/a/b"],
  ];
  it.each(same)("%s and %s share a key", (a, b) => {
    expect(normalizeUrlForCache(a)).toBe(normalizeUrlForCache(b));
  });
  it.each(different)("%s and %s never share a key", (a, b) => {
    expect(normalizeUrlForCache(a)).not.toBe(normalizeUrlForCache(b));
  });

  // Dot-only segments are excluded: WHATWG resolves "/a/../b" to "/b", the same resource.
  const segment = fc.stringMatching(/^[A-Za-z0-9._~-]{0,8}$/).filter((s) => !/^\.+$/.test(s));
  const path = fc.array(segment, { maxLength: 4 }).map((parts) => `/${parts.join("/")}`);
  const query = fc
    .array(fc.tuple(fc.stringMatching(/^[A-Za-z0-9]{1,4}$/), fc.stringMatching(/^[A-Za-z0-9%]{0,6}$/)), {
      maxLength: 4,
    })
    .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}`));

  it("property: two URLs whose path or query differ never share a key", () => {
    fc.assert(
      fc.property(
        path,
        query,
        path,
        query,
        fc.constantFrom("Example.com", "example.COM:80", "example.com"),
        (p1, q1, p2, q2, host) => {
          const a = new URL(`http://${host}${p1}${q1}#frag`);
          const b = new URL(`http://example.com${p2}${q2}`);
          const differ = a.pathname !== b.pathname || a.search !== b.search;
          if (differ) expect(normalizeUrlForCache(a)).not.toBe(normalizeUrlForCache(b));
          else expect(normalizeUrlForCache(a)).toBe(normalizeUrlForCache(b));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("property: the key keeps path and query text exactly", () => {
    fc.assert(
      fc.property(path, query, (p, q) => {
        expect(normalizeUrlForCache(`HTTP://EXAMPLE.com:80${p}${q}#x`)).toBe(`http://example.com${p}${q}`);
      }),
    );
  });
});

describe("order of checks", () => {
  const gate = (resolver: DnsResolver, blocklist: string[] = []) => ({ allowPrivate: false, resolver, blocklist });

  it("refuses a secret before SSRF: a secret on a private host is still secret_in_url", async () => {
    const resolver = dohResolver();
    expect(await codeOf(gateUrl("http://127.0.0.1/?api_key=Zx81kQ2mP0aL7vN3", gate(resolver)))).toBe("secret_in_url");
  });

  it("one secret in any URL refuses the whole call before any lookup", async () => {
    const urls = [
      "https://a.example.com/",
      "http://10.0.0.1/",
      "https://b.example.com/?access_token=Zx81kQ2mP0aL7vN3qq",
    ];
    expect(await codeOf(() => assertNoSecretInUrls(urls))).toBe("secret_in_url");
  });

  it("runs SSRF before policy: a blocklisted private host is blocked_private_address", async () => {
    expect(await codeOf(gateUrl("http://10.0.0.1/", gate(dohResolver(), ["10.0.0.1"])))).toBe(
      "blocked_private_address",
    );
  });

  it("applies the blocklist to a public host, label-aware", async () => {
    const resolver = dohResolver();
    expect(await codeOf(gateUrl("https://ads.tracker.example/x", gate(resolver, ["tracker.example"])))).toBe(
      "blocked_by_policy",
    );
    expect(await codeOf(gateUrl("https://eviltracker.example/x", gate(resolver, ["tracker.example"])))).toBe("ok");
  });

  it("exposes each step separately for routes (secrets for all, SSRF per URL, policy per URL)", async () => {
    const resolver = dohResolver();
    const url = new URL(`https://${uniqueToken("news")}.example.org/a`);
    await expect(assertSsrfSafe(url, { allowPrivate: false, resolver })).resolves.toEqual({ local: false });
    expect(await emulatorCalls(emulator.url, "dns", url.hostname)).toBe(2); // one lookup: A and AAAA
    expect(() => assertAllowedByPolicy(url, ["example.org"])).toThrow(AppError);
    expect(() => assertAllowedByPolicy(url, [])).not.toThrow();
  });

  it("returns the parsed URL when every check passes", async () => {
    const { url, local } = await gateUrl("https://Example.org/a?b=1", gate(dohResolver()));
    expect(url.href).toBe("https://example.org/a?b=1");
    expect(local).toBe(false);
  });
});
