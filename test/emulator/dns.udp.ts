/**
 * A plain DNS server over UDP on 127.0.0.1, the emulated "runtime's own resolver" (what
 * `Deno.resolveDns` asks with `DENO_DNS_SERVER`), next to the emulator's DNS-over-HTTPS one. It
 * answers A and AAAA questions from the callback; anything else gets an empty NOERROR.
 */
import { createSocket } from "node:dgram";

export interface DnsAnswer {
  /** 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN. */
  rcode: number;
  addresses: readonly string[];
  ttl: number;
}

export interface PlainDnsServer {
  port: number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

export async function startPlainDns(answer: (name: string, type: "A" | "AAAA") => DnsAnswer): Promise<PlainDnsServer> {
  const socket = createSocket("udp4");
  socket.on("message", (query, peer) => {
    const reply = respond(query, answer);
    if (reply) socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, "127.0.0.1", () => resolve());
  });
  return {
    port: socket.address().port,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The reply to one query, or null for a packet that is not a one-question query. */
function respond(query: Buffer, answer: (name: string, type: "A" | "AAAA") => DnsAnswer): Buffer | null {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < query.length && query[at] !== 0) {
    const length = query[at]!;
    if (length > 63) return null;
    labels.push(query.subarray(at + 1, at + 1 + length).toString("latin1"));
    at += 1 + length;
  }
  const questionEnd = at + 5;
  if (questionEnd > query.length) return null;
  const type = query.readUInt16BE(at + 1);
  const name = labels.join(".").toLowerCase();
  const known = type === TYPE_A ? "A" : type === TYPE_AAAA ? "AAAA" : null;
  const result = known ? answer(name, known) : { rcode: 0, addresses: [], ttl: 0 };
  const records = result.rcode === 0 ? result.addresses.map((address) => record(type, address, result.ttl)) : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  // QR, the query's RD, RA, and the answer's RCODE.
  header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | (result.rcode & 0xf), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
}

function record(type: number, address: string, ttl: number): Buffer {
  const data = type === TYPE_A ? Buffer.from(address.split(".").map(Number)) : ipv6Bytes(address);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  fixed.writeUInt16BE(type, 2);
  fixed.writeUInt16BE(1, 4); // class IN
  fixed.writeUInt32BE(ttl, 6);
  fixed.writeUInt16BE(data.length, 10);
  return Buffer.concat([fixed, data]);
}

function ipv6Bytes(address: string): Buffer {
  const [head = "", tail] = address.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16)));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}
