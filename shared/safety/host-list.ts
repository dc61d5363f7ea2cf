/**
 * Operator host lists (`security.website_blocklist`, `web.cache_exempt_hosts`): one matching rule
 * for both, label-aware so `mysite.dev` never matches `evilmysite.dev`.
 */
import { canonicalIp } from "./ip";

interface HostPattern {
  /** Lower-case ASCII host or suffix, no trailing dot. */
  host: string;
  /** `*.example.com`: subdomains only. Bare `example.com`: the host and its subdomains. */
  subdomainsOnly: boolean;
}

/**
 * Lower-case, drop trailing dots and IPv6 brackets, punycode IDN labels; an IP address in its one
 * spelling (`canonicalIp`), so a listed 1.2.3.4 also matches [::ffff:1.2.3.4] and 64:ff9b::102:304.
 */
function normalizeHost(raw: string): { host: string; ip: boolean } {
  let host = raw.trim().toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  while (host.endsWith(".")) host = host.slice(0, -1);
  const ip = canonicalIp(host);
  if (ip !== null) return { host: ip, ip: true };
  if (/[^\x00-\x7f]/.test(host)) {
    try {
      host = new URL(`http://${host}/`).hostname;
    } catch {
      return { host, ip: false };
    }
  }
  return { host, ip: false };
}

function parsePattern(raw: string): HostPattern | null {
  let text = raw.trim();
  // Operators sometimes paste a URL; only its host matters.
  if (text.includes("://")) {
    try {
      text = new URL(text).hostname;
    } catch {
      return null;
    }
  }
  let subdomainsOnly = false;
  if (text.startsWith("*.")) {
    subdomainsOnly = true;
    text = text.slice(2);
  } else if (text.startsWith(".")) {
    text = text.slice(1);
  }
  const { host } = normalizeHost(text);
  return host === "" ? null : { host, subdomainsOnly };
}

/**
 * Compile a host list once; the returned matcher is cheap enough for the per-request path.
 *
 * @example
 * const blocked = compileHostList(["*.ads.example", "mysite.dev"]);
 * blocked("a.mysite.dev"); // true
 * blocked("evilmysite.dev"); // false
 */
export function compileHostList(patterns: readonly string[]): (host: string) => boolean {
  const compiled = patterns.map(parsePattern).filter((p): p is HostPattern => p !== null);
  if (compiled.length === 0) return () => false;
  return (rawHost: string): boolean => {
    const { host, ip } = normalizeHost(rawHost);
    if (host === "") return false;
    // An address has no subdomains: it matches a listed address exactly, never a suffix.
    if (ip) return compiled.some((p) => !p.subdomainsOnly && host === p.host);
    return compiled.some((p) => (!p.subdomainsOnly && host === p.host) || host.endsWith(`.${p.host}`));
  };
}

/**
 * Does `host` match any pattern: an exact host, `*.example.com` (subdomains only) or a bare suffix
 * `example.com` (the host and its subdomains)? Case-insensitive; trailing dots ignored.
 */
export function hostMatchesList(host: string, patterns: readonly string[]): boolean {
  return compileHostList(patterns)(host);
}
