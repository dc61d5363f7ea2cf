/**
 * SSRF check for user-supplied URLs (docs/web.md, "The order of steps", step 3): decides whether the host of an already parsed
 * WHATWG URL may be fetched. Literal addresses are classified directly, plainly local names are
 * refused without a lookup, other names are resolved through DoH and every answer must be public.
 */
import type { DnsResolver, ResolverFault } from "../ports";
import { type AddressClass, PRIVATE_KINDS, classifyIPv4, classifyIPv6, parseIPv4, parseIPv6 } from "./ip";

export type GateVerdict =
  /** `local`: passed only because `allowPrivate` opens it (a loopback name, or a non-public literal or answer). */
  | { ok: true; local: boolean }
  | {
      ok: false;
      code: "blocked_private_address" | "host_not_found" | "invalid_url" | "dns_unavailable";
      message: string;
    };

export interface SsrfOptions {
  /**
   * `security.allow_private_urls`: opens loopback, RFC 1918, unique-local, CGNAT, site-local and
   * benchmarking addresses (and `localhost`), and has local names (`*.local`, `*.internal`, single
   * labels) resolved and judged by their addresses instead of refused. Metadata, link-local,
   * unspecified, multicast, broadcast, reserved and documentation ranges stay refused.
   */
  allowPrivate: boolean;
  resolver: DnsResolver;
}

/** Metadata service names, refused whatever `allowPrivate` says. */
const METADATA_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "metadata.platformequinix.com",
]);

/** Suffixes that never name a public host (RFC 6761, RFC 8375, ICANN's .internal, common LAN names). */
const LOCAL_SUFFIXES = [
  ".localhost",
  ".local",
  ".internal",
  ".home.arpa",
  ".localdomain",
  ".lan",
  ".intranet",
  ".corp",
  ".home",
];

/** A DNS name as WHATWG URL leaves it for http(s): lower-case ASCII labels (IDN already punycoded). */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const PUBLIC_OK: GateVerdict = { ok: true, local: false };
const LOCAL_OK: GateVerdict = { ok: true, local: true };

/** Host without brackets, lower-cased, trailing dots removed. */
function bareHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) return host.slice(1, -1);
  while (host.endsWith(".")) host = host.slice(0, -1);
  return host;
}

/** Classify a literal address host; null for a name. */
function classifyLiteral(host: string): AddressClass | null {
  if (host.includes(":")) {
    const groups = parseIPv6(host);
    return groups === null ? null : classifyIPv6(groups);
  }
  const ip = parseIPv4(host);
  return ip === null ? null : classifyIPv4(ip);
}

/**
 * True for hosts that plainly are not on the public internet: `localhost`, `*.localhost`,
 * `*.local`, `*.internal`, `*.home.arpa` and friends, single-label names, metadata names, and IP
 * literals outside public space. Used by the SSRF check (refused without a lookup) and by the
 * extract cache (never stored).
 *
 * @example isLocalLookingHost("printer.local") // true
 * @example isLocalLookingHost("example.com.") // false
 */
export function isLocalLookingHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === "") return true;
  const literal = classifyLiteral(host);
  if (literal !== null) return literal.kind !== "public";
  if (host === "localhost" || METADATA_NAMES.has(host) || !host.includes(".")) return true;
  return LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

function refuse(message: string): GateVerdict {
  return { ok: false, code: "blocked_private_address", message };
}

/** What an operator sets to reach a private host: said only where that setting would open it. */
const ALLOW_PRIVATE_HINT =
  "; an operator who means to reach private hosts sets security.allow_private_urls = true (env SECURITY_ALLOW_PRIVATE_URLS)";

/** The refusal of a non-public address (`cls`), naming the setting that opens it when one does. */
function refuseAddress(sentence: string, cls: AddressClass): GateVerdict {
  const hint = PRIVATE_KINDS.has(cls.kind) ? ALLOW_PRIVATE_HINT : "";
  return refuse(`${sentence}, so it is not fetched${hint}.`);
}

function invalid(message: string): GateVerdict {
  return { ok: false, code: "invalid_url", message };
}

/** Whether an address of class `cls` may be fetched; `allowPrivate` is `security.allow_private_urls`. */
export function isAllowedAddress(cls: AddressClass, allowPrivate: boolean): boolean {
  return cls.kind === "public" || (allowPrivate && PRIVATE_KINDS.has(cls.kind));
}

/**
 * Decide whether `url` may be fetched. Never throws; a refusal names the host and the range (no
 * query, path or secret is echoed).
 *
 * @example
 * await checkUrlSafety(new URL("http://0x7f.1/"), { allowPrivate: false, resolver })
 * // { ok: false, code: "blocked_private_address", message: "The host 127.0.0.1 is not a public address (loopback, ..." }
 */
export async function checkUrlSafety(url: URL, options: SsrfOptions): Promise<GateVerdict> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return invalid(`Only http and https URLs can be fetched, not ${url.protocol.slice(0, 16)} URLs.`);
  }
  const host = bareHost(url.hostname);
  if (host === "") return invalid("The URL has no host name; give a full http or https URL.");

  const literal = classifyLiteral(host);
  if (literal !== null) {
    if (isAllowedAddress(literal, options.allowPrivate))
      return url.username || url.password ? userInfoRefusal() : literal.kind === "public" ? PUBLIC_OK : LOCAL_OK;
    return refuseAddress(`The host ${url.hostname} is not a public address (${literal.label})`, literal);
  }
  // WHATWG URL turns every numeric host form into a dotted quad; a host whose last label is still a
  // number (decimal or 0x hex: what makes WHATWG read a host as IPv4) came from a parser that did
  // not, so it is refused rather than guessed at. Other labels may look numeric: 0x.org is a name.
  if (/(?:^|\.)(?:[0-9]+|0x[0-9a-f]*)\.?$/.test(host)) {
    return invalid("The URL's host is neither a valid IP address nor a host name.");
  }
  if (METADATA_NAMES.has(host)) {
    return refuse(`The host ${host} is a cloud metadata service; it can never be fetched.`);
  }
  const loopbackName = host === "localhost" || host.endsWith(".localhost");
  if (loopbackName && options.allowPrivate) return url.username || url.password ? userInfoRefusal() : LOCAL_OK;
  // With private addresses allowed, a local name (a router's `*.local`) is resolved like any
  // other and judged by its addresses, so the metadata floor holds for it too.
  if (!options.allowPrivate && isLocalLookingHost(host)) {
    const hint = loopbackName ? ALLOW_PRIVATE_HINT : "";
    return refuse(`The host ${host} is a local network name; only public hosts can be fetched${hint}.`);
  }
  if (url.username || url.password) return userInfoRefusal();
  if (!DNS_NAME.test(host)) return invalid("The URL's host is not a valid DNS name.");

  const lookup = await options.resolver.lookup(host);
  if (!lookup.ok) {
    if (lookup.reason === "unavailable") return resolverUnavailable(host, lookup.resolver, lookup.fault);
    const why =
      lookup.reason === "nxdomain"
        ? "does not exist in DNS"
        : lookup.reason === "no_address"
          ? "has no IPv4 or IPv6 address in DNS"
          : "could not be resolved (the resolver answered with an error for it)";
    return { ok: false, code: "host_not_found", message: `The host ${host} ${why}; check the URL and try again.` };
  }
  for (const answer of lookup.addresses) {
    if (!isAllowedAddress(answer.cls, options.allowPrivate))
      return refuseAddress(
        `The host ${host} resolves to ${answer.address}, which is not a public address (${answer.cls.label})`,
        answer.cls,
      );
  }
  return lookup.addresses.every((answer) => answer.cls.kind === "public") ? PUBLIC_OK : LOCAL_OK;
}

const FAULT_WORDS: Record<ResolverFault, string> = {
  timeout: "did not answer in time",
  unreachable: "could not be reached",
  http_error: "answered with an HTTP error",
  not_doh_json: "did not answer in the DNS-over-HTTPS JSON format",
};

/**
 * The resolver, not the name, failed: still refused (fail closed), but said as it is, with the
 * setting that fixes it, so an egress filter or an offline machine is not reported as a private address.
 */
function resolverUnavailable(host: string, resolver: string, fault: ResolverFault): GateVerdict {
  return {
    ok: false,
    code: "dns_unavailable",
    message: `The DNS-over-HTTPS resolver ${resolver} ${FAULT_WORDS[fault]}, so the host ${host} cannot be verified as public and is not fetched; point security.dns_resolver_url (env SECURITY_DNS_RESOLVER_URL) at a resolver this service can reach, or try again later.`,
  };
}

function userInfoRefusal(): GateVerdict {
  return invalid("URLs with a user name or password in them are not fetched; remove the part before '@'.");
}
