/**
 * DNS-over-HTTPS (JSON API) lookups for the SSRF gate, with a small in-memory answer cache (never
 * longer than the answer's own TTL) so the gate costs microseconds on a warm hostname. The same
 * code runs on Workers and Deno because it only needs an injected fetch and clock.
 */
import { readAtMost } from "../bytes";
import { Deadline } from "../deadline";
import type { Clock, DnsLookup, DnsResolver, FetchFn, Logger, ResolvedAddress, ResolverFault } from "../ports";
import { classifyIPv4, classifyIPv6, parseIPv4, parseIPv6 } from "./ip";

export interface DnsResolverOptions {
  /** The DoH JSON endpoint (`security.dns_resolver_url`); operator configuration, trusted. */
  url: string;
  fetch: FetchFn;
  clock: Clock;
  /** Per lookup (both queries run in parallel). Default 3000 ms. */
  timeoutMs?: number;
  /**
   * An answer is kept at most its own TTL and at most `maxTtlSeconds` (default 300); a TTL of 0 (or
   * none) is not kept at all, so the SSRF check never uses an address the name no longer has.
   */
  maxTtlSeconds?: number;
  /** How long NXDOMAIN and "no address" are kept (a refusal; default 30 s). */
  negativeTtlSeconds?: number;
  /** One warning line per lookup the resolver could not answer (no stack trace). */
  log?: Logger;
  /** Cache size bound; the oldest entry goes first. Default 2048. */
  maxEntries?: number;
}

/** DNS record types of the JSON API. */
const TYPE_A = 1;
const TYPE_CNAME = 5;
const TYPE_AAAA = 28;
/** RCODE 3: the name does not exist. */
const STATUS_NXDOMAIN = 3;
const MAX_RESPONSE_BYTES = 64 * 1024;

interface CacheSlot {
  result: DnsLookup;
  expiresAt: number;
}

type QueryResult =
  | { ok: true; addresses: ResolvedAddress[]; ttlSeconds: number | null }
  | { ok: false; reason: "nxdomain" | "resolver_error" }
  | { ok: false; reason: "unavailable"; fault: ResolverFault };

/**
 * Build a resolver bound to one DoH endpoint. Keep one per isolate/process: its cache is plain
 * data (no promises are shared between requests, which Workers forbids), so it is safe to reuse.
 *
 * @example
 * const resolver = createDnsResolver({ url: config.security.dns_resolver_url, fetch, clock: Date.now });
 * await resolver.lookup("example.com"); // { ok: true, addresses: [...] }
 */
export function createDnsResolver(options: DnsResolverOptions): DnsResolver {
  const timeoutMs = options.timeoutMs ?? 3000;
  const negativeTtl = options.negativeTtlSeconds ?? 30;
  const maxTtl = options.maxTtlSeconds ?? 300;
  const resolverHost = new URL(options.url).host;
  const maxEntries = options.maxEntries ?? 2048;
  const cache = new Map<string, CacheSlot>();

  function remember(host: string, result: DnsLookup, ttlSeconds: number): void {
    cache.delete(host);
    const ttl = Math.min(maxTtl, ttlSeconds);
    if (!(ttl > 0)) return;
    while (cache.size >= maxEntries) {
      const oldest = cache.keys().next();
      if (oldest.done) break;
      cache.delete(oldest.value);
    }
    cache.set(host, { result, expiresAt: options.clock() + ttl * 1000 });
  }

  async function query(host: string, type: number, signal: AbortSignal): Promise<QueryResult> {
    const target = new URL(options.url);
    target.searchParams.set("name", host);
    target.searchParams.set("type", type === TYPE_A ? "A" : "AAAA");
    let body: unknown;
    try {
      const response = await options.fetch(target.toString(), {
        headers: { accept: "application/dns-json" },
        signal,
      });
      if (!response.ok) {
        await response.body?.cancel();
        return { ok: false, reason: "unavailable", fault: "http_error" };
      }
      // Read no further than a resolver's answer can be: an endless body is cut at the bound.
      const bytes = response.body
        ? await readAtMost(response.body, MAX_RESPONSE_BYTES, () => new SyntaxError("DoH answer over its byte bound"))
        : new Uint8Array(0);
      body = JSON.parse(new TextDecoder().decode(bytes));
    } catch (error) {
      if (signal.aborted) return { ok: false, reason: "unavailable", fault: "timeout" };
      return { ok: false, reason: "unavailable", fault: error instanceof SyntaxError ? "not_doh_json" : "unreachable" };
    }
    // A captive portal or a filtering proxy answers with HTML or other JSON: not a resolver's answer.
    if (typeof body !== "object" || body === null || typeof (body as { Status?: unknown }).Status !== "number") {
      return { ok: false, reason: "unavailable", fault: "not_doh_json" };
    }
    return parseAnswer(body);
  }

  async function resolve(host: string): Promise<{ result: DnsLookup; ttlSeconds: number | null }> {
    const deadline = new Deadline(timeoutMs);
    try {
      const both = Promise.all([query(host, TYPE_A, deadline.signal), query(host, TYPE_AAAA, deadline.signal)]);
      const outcome = await deadline.orLate(both, "timeout" as const);
      const unavailable = (fault: ResolverFault) => ({
        result: { ok: false, reason: "unavailable", fault, resolver: resolverHost } as const,
        ttlSeconds: null,
      });
      if (outcome === "timeout") return unavailable("timeout");
      const [a, aaaa] = outcome;
      // Fail closed: if either family cannot be checked, the name is not known to be safe.
      for (const q of [a, aaaa]) if (!q.ok && q.reason === "unavailable") return unavailable(q.fault);
      for (const reason of ["resolver_error", "nxdomain"] as const) {
        if ((!a.ok && a.reason === reason) || (!aaaa.ok && aaaa.reason === reason)) {
          return { result: { ok: false, reason }, ttlSeconds: reason === "nxdomain" ? negativeTtl : null };
        }
      }
      if (!a.ok || !aaaa.ok) return { result: { ok: false, reason: "resolver_error" }, ttlSeconds: null };
      const addresses = [...a.addresses, ...aaaa.addresses];
      if (addresses.length === 0) return { result: { ok: false, reason: "no_address" }, ttlSeconds: negativeTtl };
      // No TTL in the answer: nothing says how long it holds, so it is not kept.
      const ttls = [a.ttlSeconds, aaaa.ttlSeconds].filter((t): t is number => t !== null);
      return { result: { ok: true, addresses }, ttlSeconds: ttls.length > 0 ? Math.min(...ttls) : 0 };
    } finally {
      deadline.clear();
    }
  }

  return {
    async lookup(rawHost: string): Promise<DnsLookup> {
      const host = rawHost.toLowerCase().replace(/\.+$/, "");
      const slot = cache.get(host);
      if (slot !== undefined) {
        if (slot.expiresAt > options.clock()) return slot.result;
        cache.delete(host);
      }
      const { result, ttlSeconds } = await resolve(host);
      // Transient failures (an unavailable resolver, resolver errors) are never cached.
      if (ttlSeconds !== null) remember(host, result, ttlSeconds);
      else if (!result.ok && result.reason === "unavailable")
        options.log?.warn("dns_unavailable", { resolver: resolverHost, fault: result.fault });
      return result;
    },
  };
}

/** Read one DoH JSON answer. Anything unexpected is a resolver error, never "no addresses". */
function parseAnswer(body: unknown): QueryResult {
  if (typeof body !== "object" || body === null) return { ok: false, reason: "resolver_error" };
  const { Status, Answer } = body as { Status?: unknown; Answer?: unknown };
  if (Status === STATUS_NXDOMAIN) return { ok: false, reason: "nxdomain" };
  if (Status !== 0) return { ok: false, reason: "resolver_error" };
  if (Answer === undefined) return { ok: true, addresses: [], ttlSeconds: null };
  if (!Array.isArray(Answer)) return { ok: false, reason: "resolver_error" };
  const addresses: ResolvedAddress[] = [];
  let ttlSeconds: number | null = null;
  for (const record of Answer as unknown[]) {
    if (typeof record !== "object" || record === null) return { ok: false, reason: "resolver_error" };
    const { type: recordType, data, TTL } = record as { type?: unknown; data?: unknown; TTL?: unknown };
    if (recordType !== TYPE_A && recordType !== TYPE_AAAA && recordType !== TYPE_CNAME) continue;
    if (typeof TTL === "number" && Number.isFinite(TTL))
      ttlSeconds = ttlSeconds === null ? TTL : Math.min(ttlSeconds, TTL);
    // CNAME chains come flattened in the same answer: checking every A/AAAA record covers them.
    if (recordType === TYPE_CNAME) continue;
    if (typeof data !== "string") return { ok: false, reason: "resolver_error" };
    if (recordType === TYPE_A) {
      const ip = parseIPv4(data);
      if (ip === null) return { ok: false, reason: "resolver_error" };
      addresses.push({ address: data, cls: classifyIPv4(ip) });
    } else {
      const groups = parseIPv6(data);
      if (groups === null) return { ok: false, reason: "resolver_error" };
      addresses.push({ address: data, cls: classifyIPv6(groups) });
    }
  }
  return { ok: true, addresses, ttlSeconds };
}

/**
 * One resolver (and so one answer cache) per resolver URL, for the life of an isolate or process.
 * @example const dnsResolver = dnsResolverPool(fetch, Date.now, log); dnsResolver(config.security.dns_resolver_url)
 */
export function dnsResolverPool(fetch: FetchFn, clock: Clock, log?: Logger): (url: string) => DnsResolver {
  const resolvers = new Map<string, DnsResolver>();
  return (url) => {
    let resolver = resolvers.get(url);
    if (!resolver) {
      resolver = createDnsResolver({ url, fetch, clock, log });
      resolvers.set(url, resolver);
    }
    return resolver;
  };
}
