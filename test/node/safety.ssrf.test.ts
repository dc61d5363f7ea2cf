import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import { createDnsResolver } from "../../shared/safety/dns";
import type { DnsResolver } from "../../shared/ports";
import { gateUrl } from "../../shared/safety/gate";
import { classifyIpLiteral, parseIPv6 } from "../../shared/safety/ip";
import { checkUrlSafety, isLocalLookingHost } from "../../shared/safety/ssrf";
import { closeServer, type DohEmulator, listen, startDohEmulator } from "./safety.support";

/** A resolver that must never be asked: literal addresses and local names need no lookup. */
function noLookupResolver(): DnsResolver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    lookup(host) {
      asked.push(host);
      return Promise.resolve({ ok: false, reason: "resolver_error" });
    },
  };
}

async function gateCode(
  raw: string,
  allowPrivate = false,
  resolver: DnsResolver = noLookupResolver(),
): Promise<string> {
  try {
    await gateUrl(raw, { allowPrivate, resolver, blocklist: [] });
    return "allowed";
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

const BLOCKED = "blocked_private_address";
const INVALID = "invalid_request";

// Odd forms of non-public hosts. WHATWG URL normalises the IPv4 forms and percent-encoding; the
// gate classifies what is left, including everything IPv6 can smuggle.
const REFUSED: Array<[url: string, code: string]> = [
  ["http://2130706433/", BLOCKED],
  ["http://0177.0.0.1/", BLOCKED],
  ["http://0x7f.1/", BLOCKED],
  ["http://0x7f000001/", BLOCKED],
  ["http://127.1/", BLOCKED],
  ["http://127.0.0.1./", BLOCKED],
  ["http://0300.0250.0.1/", BLOCKED],
  ["http://[::1]/", BLOCKED],
  ["http://[::ffff:127.0.0.1]/", BLOCKED],
  ["http://[::ffff:7f00:1]/", BLOCKED],
  ["http://[::127.0.0.1]/", BLOCKED],
  ["http://[::ffff:0:7f00:1]/", BLOCKED],
  ["http://[64:ff9b::a9fe:a9fe]/", BLOCKED],
  ["http://[64:ff9b::127.0.0.1]/", BLOCKED],
  ["http://[64:ff9b:1::a00:1]/", BLOCKED],
  ["http://[2002:a9fe:a9fe::]/", BLOCKED],
  ["http://[2002:7f00:1::1]/", BLOCKED],
  ["http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", BLOCKED], // Teredo, client 127.0.0.1
  ["http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", BLOCKED], // Teredo, client 10.0.0.1
  ["http://localhost/", BLOCKED],
  ["http://localhost./", BLOCKED],
  ["http://LOCALHOST/", BLOCKED],
  ["http://localhost:8787/admin", BLOCKED],
  ["http://foo.localhost/", BLOCKED],
  ["http://metadata.google.internal/computeMetadata/v1/", BLOCKED],
  ["http://metadata/", BLOCKED],
  ["http://instance-data/latest/", BLOCKED],
  ["http://169.254.169.254/latest/meta-data/", BLOCKED],
  ["http://169.254.170.2/v2/credentials", BLOCKED],
  ["http://[fd00:ec2::254]/", BLOCKED],
  ["http://[::ffff:169.254.169.254]/", BLOCKED],
  ["http://100.100.100.200/latest/meta-data/", BLOCKED],
  ["http://192.0.0.192/opc/v2/instance/", BLOCKED],
  ["http://0/", BLOCKED],
  ["http://0.0.0.0:8080/", BLOCKED],
  ["http://[::]/", BLOCKED],
  ["http://%31%32%37.0.0.1/", BLOCKED],
  ["http://%6c%6f%63%61%6c%68%6f%73%74/", BLOCKED],
  ["http://user@127.0.0.1/", BLOCKED],
  ["http://example.com@127.0.0.1/", BLOCKED],
  ["http://10.0.0.1/", BLOCKED],
  ["http://172.16.5.4/", BLOCKED],
  ["http://172.31.255.255/", BLOCKED],
  ["http://192.168.1.1/", BLOCKED],
  ["http://100.64.0.1/", BLOCKED],
  ["http://169.254.1.1/", BLOCKED],
  ["http://[fe80::1]/", BLOCKED],
  ["http://[fd12:3456::1]/", BLOCKED],
  ["http://[fec0::1]/", BLOCKED],
  ["http://224.0.0.1/", BLOCKED],
  ["http://[ff02::1]/", BLOCKED],
  ["http://255.255.255.255/", BLOCKED],
  ["http://240.0.0.1/", BLOCKED],
  ["http://198.18.0.1/", BLOCKED],
  ["http://198.19.255.254/", BLOCKED],
  ["http://192.0.2.1/", BLOCKED],
  ["http://198.51.100.7/", BLOCKED],
  ["http://203.0.113.9/", BLOCKED],
  ["http://[2001:db8::1]/", BLOCKED],
  ["http://192.0.0.8/", BLOCKED],
  ["http://[100::1]/", BLOCKED],
  ["http://printer.local/", BLOCKED],
  ["http://wiki.corp.internal/", BLOCKED],
  ["http://router.home.arpa/", BLOCKED],
  ["http://intranet/", BLOCKED],
  ["http://[fe80::1%25eth0]/", INVALID],
  ["ftp://example.com/file.txt", INVALID],
  ["file:///etc/passwd", INVALID],
  ["gopher://127.0.0.1:70/_stats", INVALID],
  ["ws://example.com/socket", INVALID],
  ["javascript:alert(1)", INVALID],
  ["data:text/html,<h1>hi</h1>", INVALID],
  ["http://user@example.com/", INVALID],
  ["http://exa*mple.com/", INVALID],
  ["not a url", INVALID],
  ["//example.com/no-scheme", INVALID],
];

const PUBLIC_LITERALS = [
  "http://8.8.8.8/",
  "https://1.1.1.1/dns-query",
  "http://93.184.215.14:8080/path?q=1",
  "http://[2606:4700:4700::1111]/",
  "http://[::ffff:8.8.8.8]/",
  "http://[64:ff9b::808:808]/",
  "http://172.32.0.1/",
  "http://100.128.0.1/",
  "http://192.169.0.1/",
  "http://11.0.0.1/",
  "http://134744072/", // 8.8.8.8 in decimal
];

describe("SSRF gate: literal hosts and local names (no DNS lookup)", () => {
  it("has at least 40 odd-form URLs in the refusal table", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(40);
  });

  it.each(REFUSED)("refuses %s with %s", async (url, code) => {
    const resolver = noLookupResolver();
    expect(await gateCode(url, false, resolver)).toBe(code);
    expect(resolver.asked).toEqual([]);
  });

  it.each(PUBLIC_LITERALS)("allows the public literal %s", async (url) => {
    const resolver = noLookupResolver();
    expect(await gateCode(url, false, resolver)).toBe("allowed");
    expect(resolver.asked).toEqual([]);
  });

  it("relies on WHATWG URL to turn numeric and percent-encoded host forms into dotted quads", () => {
    for (const raw of [
      "http://2130706433/",
      "http://0177.0.0.1/",
      "http://0x7f.1/",
      "http://127.1/",
      "http://%31%32%37.0.0.1/",
    ]) {
      expect(new URL(raw).hostname).toBe("127.0.0.1");
    }
    expect(new URL("http://[::ffff:127.0.0.1]/").hostname).toBe("[::ffff:7f00:1]");
    expect(() => new URL("http://999.1.1.1/")).toThrow();
    expect(() => new URL("http://example.123/")).toThrow();
  });

  it("lets names whose labels start with 0x or digits through: only a numeric last label reads as IPv4", async () => {
    const resolver: DnsResolver = {
      lookup: () =>
        Promise.resolve({
          ok: true,
          addresses: [{ address: "93.184.215.14", cls: { kind: "public", label: "public address" } }],
        }),
    };
    for (const raw of [
      "https://0x.org/docs/",
      "https://docs.0x.org/",
      "https://0xdeadbeef.io/",
      "https://1.2.3.example/",
    ]) {
      expect(await checkUrlSafety(new URL(raw), { allowPrivate: false, resolver }), raw).toEqual({
        ok: true,
        local: false,
      });
    }
  });

  it("keeps cloud metadata blocked even with allowPrivate, while opening 10.0.0.1", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://192.0.0.192/",
      "http://169.254.170.2/",
      "http://metadata.google.internal/",
      "http://metadata/",
      "http://[::ffff:169.254.169.254]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:a9fe:a9fe::]/",
    ]) {
      expect(await gateCode(url, true), url).toBe(BLOCKED);
    }
    for (const url of [
      "http://10.0.0.1/",
      "http://127.0.0.1:8080/",
      "http://192.168.1.1/",
      "http://[fd12::1]/",
      "http://100.64.0.1/",
      "http://localhost/",
    ]) {
      expect(await gateCode(url, true), url).toBe("allowed");
    }
  });

  it("keeps link-local, unspecified, multicast and reserved ranges closed with allowPrivate", async () => {
    for (const url of [
      "http://169.254.1.1/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "http://[::]/",
      "http://224.0.0.1/",
      "http://240.0.0.1/",
    ]) {
      expect(await gateCode(url, true), url).toBe(BLOCKED);
    }
  });

  it("names the host and range in the refusal and never the path or query", async () => {
    const verdict = await checkUrlSafety(new URL("http://0x7f.1/private/path?q=zzz"), {
      allowPrivate: false,
      resolver: noLookupResolver(),
    });
    expect(verdict).toMatchObject({ ok: false, code: BLOCKED });
    if (verdict.ok) throw new Error("unreachable");
    expect(verdict.message).toContain("127.0.0.1");
    expect(verdict.message).toContain("loopback");
    expect(verdict.message).not.toContain("private/path");
    expect(verdict.message).not.toContain("zzz");
  });
});

describe("IP parsing", () => {
  it("parses IPv6 text forms including a dotted-quad tail and refuses zone ids", () => {
    expect(parseIPv6("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseIPv6("1:2:3:4:5:6:7::")).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
    expect(parseIPv6("[2001:db8::1]")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("1:2:3:4:5:6:1.2.3.4")).toEqual([1, 2, 3, 4, 5, 6, 0x102, 0x304]);
    for (const bad of ["fe80::1%eth0", "1::2::3", ":::", "1:2:3:4:5:6:7:8:9", "12345::", "::1.2.3", "g::1"]) {
      expect(parseIPv6(bad), bad).toBeNull();
    }
  });

  it("inverts the Teredo client address", () => {
    expect(classifyIpLiteral("2001:0:4136:e378:8000:63bf:80ff:fffe")?.label).toContain("127.0.0.1");
  });

  it("marks local-looking hosts for the extract cache", () => {
    for (const host of [
      "localhost",
      "a.localhost",
      "printer.local",
      "x.internal",
      "nas.home.arpa",
      "intranet",
      "10.1.2.3",
      "[::1]",
      "metadata.google.internal",
      "localhost.",
    ]) {
      expect(isLocalLookingHost(host), host).toBe(true);
    }
    for (const host of ["example.com", "example.com.", "8.8.8.8", "[2606:4700::1111]", "local.example.com"]) {
      expect(isLocalLookingHost(host), host).toBe(false);
    }
  });
});

describe("SSRF gate: hostnames through the DoH emulator", () => {
  let doh: DohEmulator;
  beforeAll(async () => {
    doh = await startDohEmulator({
      "loopback.test": { A: ["127.0.0.1"] },
      "mixed.test": { A: ["93.184.215.14", "10.1.2.3"] },
      "v6loop.test": { AAAA: ["::1"] },
      "v6mapped.test": { AAAA: ["::ffff:169.254.169.254"] },
      "public.test": { A: ["93.184.215.14"], AAAA: ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"], ttl: 60 },
      "short-ttl.test": { A: ["93.184.215.14"], ttl: 5 },
      "alias.test": { CNAME: ["internal-lb.example"], A: ["10.0.0.5"] },
      "public-alias.test": { CNAME: ["cdn.example"], A: ["151.101.1.1"] },
      "empty.test": { A: [], AAAA: [] },
      "servfail.test": { status: 2 },
      "garbage.test": { raw: "<html>not json</html>" },
      "bad-data.test": { A: ["not-an-ip"] },
      "slow.test": { A: ["93.184.215.14"], silent: true },
      "no-ttl.test": { A: ["93.184.215.14"], ttl: 0 },
      "a.test": { A: ["1.0.0.1"] },
      "b.test": { A: ["1.0.0.2"] },
      "c.test": { A: ["1.0.0.3"] },
    });
  });
  afterAll(() => doh.close());

  function resolverAt(clock: () => number = Date.now, extra: { maxEntries?: number; timeoutMs?: number } = {}) {
    return createDnsResolver({
      url: doh.url,
      fetch,
      clock,
      timeoutMs: extra.timeoutMs ?? 1000,
      maxEntries: extra.maxEntries,
    });
  }

  async function verdictFor(host: string, resolver: DnsResolver, allowPrivate = false) {
    return checkUrlSafety(new URL(`https://${host}/page`), { allowPrivate, resolver });
  }

  it.each([
    ["loopback.test", "127.0.0.1"],
    ["mixed.test", "10.1.2.3"],
    ["v6loop.test", "::1"],
    ["v6mapped.test", "169.254.169.254"],
    ["alias.test", "10.0.0.5"],
  ])("refuses %s because an answer is non-public (%s)", async (host, address) => {
    const verdict = await verdictFor(host, resolverAt());
    expect(verdict).toMatchObject({ ok: false, code: BLOCKED });
    if (!verdict.ok) expect(verdict.message).toContain(address);
  });

  it.each(["nxdomain.test", "empty.test", "servfail.test", "bad-data.test"])(
    "fails closed for %s, as host_not_found (not a private address)",
    async (host) => {
      expect(await verdictFor(host, resolverAt())).toMatchObject({ ok: false, code: "host_not_found" });
    },
  );

  it("refuses a name whose resolver never answers, at the timeout, as dns_unavailable naming the resolver and the setting", async () => {
    const verdict = await verdictFor("slow.test", resolverAt(Date.now, { timeoutMs: 150 }));
    expect(verdict).toMatchObject({ ok: false, code: "dns_unavailable" });
    if (!verdict.ok) {
      expect(verdict.message).toContain(`resolver 127.0.0.1:${doh.port} did not answer in time`);
      expect(verdict.message).toContain("security.dns_resolver_url");
      expect(verdict.message).toContain("SECURITY_DNS_RESOLVER_URL");
    }
  });

  it("calls an endpoint that does not answer DoH JSON (a captive portal's HTML) dns_unavailable, not a private address", async () => {
    const verdict = await verdictFor("garbage.test", resolverAt());
    expect(verdict).toMatchObject({ ok: false, code: "dns_unavailable" });
    if (!verdict.ok) expect(verdict.message).toContain("did not answer in the DNS-over-HTTPS JSON format");
  });

  it("stops reading a resolver's answer at 64 KiB: an endless body is not DoH JSON, answered at once", async () => {
    let sent = 0;
    const { server, port } = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "application/dns-json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once("drain", more);
      };
      more();
    });
    try {
      // A 10-minute timeout: only the 64 KiB bound can end this check within the test's time.
      const resolver = createDnsResolver({
        url: `http://127.0.0.1:${port}/dns-query`,
        fetch,
        clock: Date.now,
        timeoutMs: 600_000,
      });
      const verdict = await verdictFor("endless.test", resolver);
      expect(verdict).toMatchObject({ ok: false, code: "dns_unavailable" });
      if (!verdict.ok) expect(verdict.message).toContain("did not answer in the DNS-over-HTTPS JSON format");
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await closeServer(server);
    }
  });

  it("refuses with dns_unavailable when the resolver cannot be reached at all, logging one line without a stack", async () => {
    const closed = await startDohEmulator({});
    const port = closed.port;
    await closed.close(); // nothing listens on this port now
    const lines: Array<[string, Record<string, unknown> | undefined]> = [];
    const log = {
      info: () => {},
      error: () => {},
      warn: (event: string, fields?: Record<string, unknown>) => lines.push([event, fields]),
    };
    const resolver = createDnsResolver({
      url: `http://127.0.0.1:${port}/dns-query`,
      fetch,
      clock: Date.now,
      timeoutMs: 1000,
      log,
    });
    const verdict = await verdictFor("example.com", resolver);
    expect(verdict).toMatchObject({ ok: false, code: "dns_unavailable" });
    if (!verdict.ok) {
      expect(verdict.message).toBe(
        `The DNS-over-HTTPS resolver 127.0.0.1:${port} could not be reached, so the host example.com cannot be verified as public and is not fetched; point security.dns_resolver_url (env SECURITY_DNS_RESOLVER_URL) at a resolver this service can reach, or try again later.`,
      );
    }
    expect(lines).toEqual([["dns_unavailable", { resolver: `127.0.0.1:${port}`, fault: "unreachable" }]]);
    // Not cached: the next check asks (and fails, and logs) again.
    await verdictFor("example.com", resolver);
    expect(lines.length).toBe(2);
  });

  it("never keeps an answer past its TTL: public with TTL 0, then private 1.5 s later, is refused", async () => {
    const records = { "rebind.test": { A: ["93.184.215.14"], ttl: 0 } };
    const rebinding = await startDohEmulator(records);
    try {
      // The resolver's clock is the test's: 1.5 s pass without waiting for them.
      let now = Date.now();
      const resolver = createDnsResolver({ url: rebinding.url, fetch, clock: () => now, timeoutMs: 1000 });
      expect(await verdictFor("rebind.test", resolver)).toEqual({ ok: true, local: false });
      records["rebind.test"].A = ["127.0.0.1"];
      now += 1500;
      const later = await verdictFor("rebind.test", resolver);
      expect(later).toMatchObject({ ok: false, code: BLOCKED });
      if (!later.ok) expect(later.message).toContain("127.0.0.1");
      expect(rebinding.calls("rebind.test")).toBe(4); // asked again: A and AAAA twice
    } finally {
      await rebinding.close();
    }
  });

  it("allows public names, and a second check of the same name does not ask the resolver again", async () => {
    const resolver = resolverAt();
    const before = doh.calls("public.test");
    expect(await verdictFor("public.test", resolver)).toEqual({ ok: true, local: false });
    expect(doh.calls("public.test") - before).toBe(2); // one A and one AAAA query
    expect(await verdictFor("PUBLIC.test.", resolver)).toEqual({ ok: true, local: false });
    expect(await verdictFor("public.test", resolver)).toEqual({ ok: true, local: false });
    expect(doh.calls("public.test") - before).toBe(2);
    expect(await verdictFor("public-alias.test", resolver)).toEqual({ ok: true, local: false });
  });

  it("caches a refusal too, so a cached private answer is still refused without a lookup", async () => {
    const resolver = resolverAt();
    const before = doh.calls("loopback.test");
    for (let i = 0; i < 3; i++) expect((await verdictFor("loopback.test", resolver)).ok).toBe(false);
    expect(doh.calls("loopback.test") - before).toBe(2);
  });

  it("honours the answer TTL exactly, with no floor", async () => {
    let now = 1_000_000;
    const resolver = resolverAt(() => now);
    const before = doh.calls("public.test");
    await verdictFor("public.test", resolver);
    now += 59_000;
    await verdictFor("public.test", resolver);
    expect(doh.calls("public.test") - before).toBe(2);
    now += 2_000; // past the 60 s TTL
    await verdictFor("public.test", resolver);
    expect(doh.calls("public.test") - before).toBe(4);

    const shortBefore = doh.calls("short-ttl.test");
    await verdictFor("short-ttl.test", resolver);
    now += 4_000; // TTL 5 s: still kept
    await verdictFor("short-ttl.test", resolver);
    expect(doh.calls("short-ttl.test") - shortBefore).toBe(2);
    now += 1_500; // past 5 s: asked again
    await verdictFor("short-ttl.test", resolver);
    expect(doh.calls("short-ttl.test") - shortBefore).toBe(4);

    const zeroBefore = doh.calls("no-ttl.test");
    await verdictFor("no-ttl.test", resolver);
    await verdictFor("no-ttl.test", resolver); // same instant: a TTL-0 answer is not kept at all
    expect(doh.calls("no-ttl.test") - zeroBefore).toBe(4);
  });

  it("does not cache a timeout: the next check asks again", async () => {
    const resolver = resolverAt(Date.now, { timeoutMs: 100 });
    const before = doh.calls("slow.test");
    await verdictFor("slow.test", resolver);
    await verdictFor("slow.test", resolver);
    expect(doh.calls("slow.test") - before).toBe(4);
  });

  it("bounds the cache size, dropping the oldest name first", async () => {
    const resolver = resolverAt(Date.now, { maxEntries: 2 });
    for (const host of ["a.test", "b.test", "c.test"]) await verdictFor(host, resolver);
    const before = doh.totalCalls();
    await verdictFor("c.test", resolver);
    await verdictFor("b.test", resolver);
    expect(doh.totalCalls()).toBe(before);
    await verdictFor("a.test", resolver);
    expect(doh.totalCalls()).toBe(before + 2);
  });

  it("checks a cached hostname in well under a millisecond", async () => {
    const resolver = resolverAt();
    const url = new URL("https://public.test/article?id=7");
    await checkUrlSafety(url, { allowPrivate: false, resolver });
    const rounds = 2000;
    const started = performance.now();
    for (let i = 0; i < rounds; i++) await checkUrlSafety(url, { allowPrivate: false, resolver });
    expect((performance.now() - started) / rounds).toBeLessThan(0.5);
  });

  it("resolves names with allowPrivate too, and still refuses a metadata answer", async () => {
    const resolver = resolverAt();
    expect(await verdictFor("loopback.test", resolver, true)).toEqual({ ok: true, local: true });
    expect(await verdictFor("v6mapped.test", resolver, true)).toMatchObject({ ok: false, code: BLOCKED });
  });

  it("says which hosts passed only because allowPrivate opens them (what the extract cache never stores)", async () => {
    const resolver = resolverAt();
    expect(await verdictFor("public.test", resolver, true)).toEqual({ ok: true, local: false });
    for (const host of ["loopback.test", "localhost", "10.0.0.1", "[fd00::1]", "app.localhost"])
      expect(await verdictFor(host, resolver, true), host).toEqual({ ok: true, local: true });
    expect(await verdictFor("93.184.215.14", resolver, true)).toEqual({ ok: true, local: false });
  });
});
