/**
 * IP address parsing and classification for the SSRF gate. Owns the list of address ranges a
 * user-supplied URL may never reach (IANA special-purpose registries, RFC 6890 and successors)
 * and the cloud metadata addresses that stay blocked even when private addresses are allowed.
 */

/**
 * Why an address is not public. `metadata` is never allowed; the "opened by allowPrivate" set is
 * {@link PRIVATE_KINDS}; everything else is refused in every configuration.
 */
export type AddressKind =
  | "public"
  | "metadata"
  | "loopback"
  | "private"
  | "unique-local"
  | "cgnat"
  | "site-local"
  | "link-local"
  | "unspecified"
  | "broadcast"
  | "multicast"
  | "reserved"
  | "benchmark"
  | "documentation"
  | "ietf-protocol"
  | "discard";

export interface AddressClass {
  kind: AddressKind;
  /** Short human label of the range, e.g. "loopback, 127.0.0.0/8". */
  label: string;
}

/**
 * Kinds that `security.allow_private_urls` opens: networks an operator's own hosts sit on
 * (benchmarking's 198.18.0.0/15 included: lab networks and some VPNs number hosts there). Metadata,
 * link-local and the ranges no host is on stay closed.
 */
export const PRIVATE_KINDS: ReadonlySet<AddressKind> = new Set<AddressKind>([
  "loopback",
  "private",
  "unique-local",
  "cgnat",
  "site-local",
  "benchmark",
]);

const PUBLIC: AddressClass = { kind: "public", label: "public address" };

/** Cloud metadata endpoints (AWS, GCP, Azure, Alibaba, Oracle, Tencent, ECS/EKS agents). */
const METADATA_V4 = new Map<number, string>([
  [ipv4ToInt(169, 254, 169, 254), "cloud metadata endpoint"],
  [ipv4ToInt(169, 254, 170, 2), "ECS container metadata endpoint"],
  [ipv4ToInt(169, 254, 170, 23), "EKS pod credentials endpoint"],
  [ipv4ToInt(169, 254, 0, 23), "Tencent Cloud metadata endpoint"],
  [ipv4ToInt(100, 100, 100, 200), "Alibaba Cloud metadata endpoint"],
  [ipv4ToInt(192, 0, 0, 192), "Oracle Cloud metadata endpoint"],
  [ipv4ToInt(168, 63, 129, 16), "Azure WireServer host endpoint"],
]);

/** IPv6 metadata endpoints, keyed by the canonical 8-group hex form. */
const METADATA_V6 = new Map<string, string>([
  [groupsKey(parseIPv6("fd00:ec2::254")!), "AWS IPv6 metadata endpoint"],
  [groupsKey(parseIPv6("fd00:ec2::23")!), "EKS IPv6 pod credentials endpoint"],
  [groupsKey(parseIPv6("fd20:ce::254")!), "GCP IPv6 metadata endpoint"],
]);

interface V4Range {
  base: number;
  bits: number;
  cls: AddressClass;
}

function v4(a: number, b: number, c: number, d: number, bits: number, kind: AddressKind, label: string): V4Range {
  return { base: ipv4ToInt(a, b, c, d), bits, cls: { kind, label } };
}

/** Most specific first: the first match wins. */
const V4_RANGES: readonly V4Range[] = [
  v4(255, 255, 255, 255, 32, "broadcast", "limited broadcast, 255.255.255.255"),
  v4(0, 0, 0, 0, 8, "unspecified", "unspecified / this network, 0.0.0.0/8"),
  v4(10, 0, 0, 0, 8, "private", "private network, 10.0.0.0/8"),
  v4(100, 64, 0, 0, 10, "cgnat", "carrier-grade NAT, 100.64.0.0/10"),
  v4(127, 0, 0, 0, 8, "loopback", "loopback, 127.0.0.0/8"),
  v4(169, 254, 0, 0, 16, "link-local", "link-local, 169.254.0.0/16"),
  v4(172, 16, 0, 0, 12, "private", "private network, 172.16.0.0/12"),
  v4(192, 0, 0, 0, 24, "ietf-protocol", "IETF protocol assignments, 192.0.0.0/24"),
  v4(192, 0, 2, 0, 24, "documentation", "documentation network, 192.0.2.0/24"),
  v4(192, 88, 99, 0, 24, "reserved", "deprecated 6to4 relay anycast, 192.88.99.0/24"),
  v4(192, 168, 0, 0, 16, "private", "private network, 192.168.0.0/16"),
  v4(198, 18, 0, 0, 15, "benchmark", "benchmarking network, 198.18.0.0/15"),
  v4(198, 51, 100, 0, 24, "documentation", "documentation network, 198.51.100.0/24"),
  v4(203, 0, 113, 0, 24, "documentation", "documentation network, 203.0.113.0/24"),
  v4(224, 0, 0, 0, 4, "multicast", "multicast, 224.0.0.0/4"),
  v4(240, 0, 0, 0, 4, "reserved", "reserved, 240.0.0.0/4"),
];

function ipv4ToInt(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inV4Range(ip: number, r: V4Range): boolean {
  if (r.bits === 0) return true;
  const mask = r.bits === 32 ? 0xffffffff : ~((1 << (32 - r.bits)) - 1) >>> 0;
  return (ip & mask) >>> 0 === r.base;
}

/** Dotted-quad text of a 32-bit address. */
function formatIPv4(ip: number): string {
  return `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
}

/**
 * Strict dotted-quad parser (four decimal parts 0..255, no leading zeros). WHATWG URL has already
 * turned decimal, octal, hex and short forms into this canonical shape for http(s) hosts, and DoH
 * answers use it too, so anything else is not an IPv4 address here.
 */
export function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value >>> 0;
}

/**
 * RFC 4291 text form to eight 16-bit groups: `::` compression, an optional dotted-quad tail,
 * optional surrounding brackets. Zone identifiers (`%eth0`) are refused: they only mean something
 * on the local machine.
 */
export function parseIPv6(text: string): number[] | null {
  let s = text;
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  if (s.length < 2 || s.length > 45 || s.includes("%")) return null;
  const lastColon = s.lastIndexOf(":");
  if (lastColon === -1) return null;
  const lastPart = s.slice(lastColon + 1);
  if (lastPart.includes(".")) {
    // Rewrite a dotted-quad tail as its two hex groups, then parse one syntax only.
    const ip4 = parseIPv4(lastPart);
    if (ip4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(ip4 >>> 16).toString(16)}:${(ip4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] ?? "");
  const rest = halves.length === 2 ? parseGroups(halves[1] ?? "") : [];
  if (head === null || rest === null) return null;
  const explicit = head.length + rest.length;
  if (halves.length === 2) {
    if (explicit > 7) return null;
    return [...head, ...new Array<number>(8 - explicit).fill(0), ...rest];
  }
  return explicit === 8 ? head : null;
}

function parseGroups(part: string): number[] | null {
  if (part === "") return [];
  const out: number[] = [];
  for (const group of part.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    out.push(parseInt(group, 16));
  }
  return out;
}

function groupsKey(g: readonly number[]): string {
  return g.map((x) => x.toString(16)).join(":");
}

/** Classify an IPv4 address given as a 32-bit number. */
export function classifyIPv4(ip: number): AddressClass {
  const meta = METADATA_V4.get(ip);
  if (meta !== undefined) return { kind: "metadata", label: meta };
  for (const r of V4_RANGES) if (inV4Range(ip, r)) return r.cls;
  return PUBLIC;
}

function embedded(ip: number, via: string): AddressClass {
  const inner = classifyIPv4(ip);
  if (inner.kind === "public") return inner;
  return { kind: inner.kind, label: `${inner.label}, embedded as ${via} ${formatIPv4(ip)}` };
}

const g32 = (hi: number, lo: number): number => ((hi << 16) | lo) >>> 0;

/** Classify an IPv6 address given as eight 16-bit groups. */
export function classifyIPv6(g: readonly number[]): AddressClass {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g;
  const meta = METADATA_V6.get(groupsKey(g));
  if (meta !== undefined) return { kind: "metadata", label: meta };
  const first96Zero = a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0;
  if (first96Zero && h === 0 && i === 0) return { kind: "unspecified", label: "unspecified, ::" };
  if (first96Zero && h === 0 && i === 1) return { kind: "loopback", label: "loopback, ::1" };
  // ::ffff:0:0/96, IPv4-mapped: the connection goes to the IPv4 address.
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0xffff) return embedded(g32(h, i), "IPv4-mapped");
  // ::ffff:0:0:0/96, IPv4-translated (RFC 2765).
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0) {
    const inner = embedded(g32(h, i), "IPv4-translated");
    return inner.kind === "public" ? { kind: "reserved", label: "IPv4-translated address, ::ffff:0:0:0/96" } : inner;
  }
  // ::/96, deprecated IPv4-compatible.
  if (first96Zero) {
    const inner = embedded(g32(h, i), "IPv4-compatible");
    return inner.kind === "public" ? { kind: "reserved", label: "deprecated IPv4-compatible address, ::/96" } : inner;
  }
  // 64:ff9b::/96, well-known NAT64 prefix: globally routable when the IPv4 inside is.
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return embedded(g32(h, i), "NAT64");
  // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): never global.
  if (a === 0x64 && b === 0xff9b && c === 1) {
    const inner = embedded(g32(h, i), "local-use NAT64");
    return inner.kind === "public" ? { kind: "private", label: "local-use NAT64, 64:ff9b:1::/48" } : inner;
  }
  // 2002::/16, 6to4: the IPv4 address sits in bits 16..47.
  if (a === 0x2002) return embedded(g32(b, c), "6to4");
  // 2001::/32, Teredo: server IPv4 in bits 32..63, client IPv4 bit-inverted in the last 32 bits.
  if (a === 0x2001 && b === 0) {
    const client = embedded(~g32(h, i) >>> 0, "Teredo client");
    if (client.kind !== "public") return client;
    const server = embedded(g32(c, d), "Teredo server");
    if (server.kind !== "public") return server;
    return { kind: "ietf-protocol", label: "Teredo tunnel address, 2001::/32" };
  }
  if (a === 0x2001 && b === 0x0db8) return { kind: "documentation", label: "documentation network, 2001:db8::/32" };
  if (a === 0x2001 && b < 0x0200) return { kind: "ietf-protocol", label: "IETF protocol assignments, 2001::/23" };
  if ((a & 0xfff0) === 0x3ff0) return { kind: "documentation", label: "documentation network, 3fff::/20" };
  if (a === 0x0100 && b === 0 && c === 0 && d === 0) return { kind: "discard", label: "discard-only prefix, 100::/64" };
  if ((a & 0xfe00) === 0xfc00) return { kind: "unique-local", label: "unique local address, fc00::/7" };
  if ((a & 0xffc0) === 0xfe80) return { kind: "link-local", label: "link-local, fe80::/10" };
  if ((a & 0xffc0) === 0xfec0) return { kind: "site-local", label: "deprecated site-local, fec0::/10" };
  if ((a & 0xff00) === 0xff00) return { kind: "multicast", label: "multicast, ff00::/8" };
  if ((a & 0xe000) !== 0x2000) return { kind: "reserved", label: "outside global unicast space, 2000::/3" };
  return PUBLIC;
}

/**
 * One spelling per address, for matching an operator's list: an IPv4 address as its dotted quad,
 * reached directly or through an IPv6 form that carries it to that IPv4 host (mapped, compatible,
 * translated, NAT64, 6to4); any other IPv6 address as its eight groups in hex. Null for a name.
 *
 * @example canonicalIp("[::ffff:102:304]") // "1.2.3.4"
 */
export function canonicalIp(text: string): string | null {
  const ip4 = parseIPv4(text);
  if (ip4 !== null) return formatIPv4(ip4);
  const g = text.includes(":") ? parseIPv6(text) : null;
  if (g === null) return null;
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g;
  const zero64 = a === 0 && b === 0 && c === 0 && d === 0;
  const carriesV4 =
    (zero64 && ((e === 0 && (f === 0xffff || f === 0)) || (e === 0xffff && f === 0)) && g32(h, i) > 1) ||
    (a === 0x64 && b === 0xff9b && (c === 1 || (c === 0 && d === 0 && e === 0 && f === 0)));
  if (carriesV4) return formatIPv4(g32(h, i));
  if (a === 0x2002) return formatIPv4(g32(b, c));
  return groupsKey(g);
}

/**
 * Classify an IP literal: dotted-quad IPv4, or IPv6 with or without brackets. Returns null when
 * the text is not an IP address at all (a hostname).
 *
 * @example classifyIpLiteral("[::ffff:7f00:1]") // { kind: "loopback", ... }
 */
export function classifyIpLiteral(text: string): AddressClass | null {
  const ip4 = parseIPv4(text);
  if (ip4 !== null) return classifyIPv4(ip4);
  if (text.includes(":")) {
    const ip6 = parseIPv6(text);
    if (ip6 !== null) return classifyIPv6(ip6);
  }
  return null;
}
