/**
 * Loopback test doubles for the safety gate: a DNS-over-HTTPS JSON emulator that counts queries,
 * and a fetch wrapper that lets a test name (`site.test`) reach a loopback server while the gate
 * sees, resolves and checks the name. Nothing here ever contacts a host other than 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FetchFn } from "../../shared/ports";

export interface DohRecord {
  A?: string[];
  AAAA?: string[];
  /** Prepended CNAME record(s), as a real resolver flattens a chain into one answer. */
  CNAME?: string[];
  /** DNS RCODE; 3 is NXDOMAIN. Default 0. */
  status?: number;
  ttl?: number;
  /** Never answer (a resolver that hangs): only the caller's deadline ends the wait. */
  silent?: boolean;
  /** Send this body instead of a JSON answer. */
  raw?: string;
}

export interface LoopbackServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface DohEmulator extends LoopbackServer {
  /** Queries received per name ("A" and "AAAA" each count). */
  calls(name: string): number;
  totalCalls(): number;
}

export function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export async function startDohEmulator(records: Record<string, DohRecord>): Promise<DohEmulator> {
  const counts = new Map<string, number>();
  const { server, port } = await listen((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const name = (url.searchParams.get("name") ?? "").toLowerCase();
    const type = url.searchParams.get("type");
    counts.set(name, (counts.get(name) ?? 0) + 1);
    if (req.headers.accept !== "application/dns-json" || url.pathname !== "/dns-query") {
      res.writeHead(400).end();
      return;
    }
    const record = records[name];
    const answer = () => {
      res.setHeader("content-type", "application/dns-json");
      if (record?.raw !== undefined) {
        res.end(record.raw);
        return;
      }
      if (record === undefined || record.status === 3) {
        res.end(JSON.stringify({ Status: 3, Question: [{ name, type: type === "A" ? 1 : 28 }] }));
        return;
      }
      const ttl = record.ttl ?? 300;
      const Answer: Array<{ name: string; type: number; TTL: number; data: string }> = [];
      for (const target of record.CNAME ?? []) Answer.push({ name, type: 5, TTL: ttl, data: `${target}.` });
      const data = type === "A" ? (record.A ?? []) : type === "AAAA" ? (record.AAAA ?? []) : [];
      for (const address of data) Answer.push({ name, type: type === "A" ? 1 : 28, TTL: ttl, data: address });
      const body: Record<string, unknown> = { Status: record.status ?? 0, TC: false, RD: true, RA: true };
      if (Answer.length > 0) body.Answer = Answer;
      res.end(JSON.stringify(body));
    };
    if (!record?.silent) answer();
  });
  return {
    url: `http://127.0.0.1:${port}/dns-query`,
    port,
    calls: (name) => counts.get(name) ?? 0,
    totalCalls: () => [...counts.values()].reduce((a, b) => a + b, 0),
    close: () => closeServer(server),
  };
}

/**
 * A fetch for tests: URLs on `127.0.0.1` go straight through; a URL whose host is one
 * of `aliases` is sent to 127.0.0.1 on the same port. The gate has already checked the alias name
 * through the DoH emulator (which says it is public), so this models "a public name whose server
 * answers with redirects". Any other host throws: the test can never leave the machine.
 */
export function loopbackFetch(aliases: readonly string[], log: string[] = []): FetchFn {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    log.push(url.href);
    if (aliases.includes(url.hostname)) url.hostname = "127.0.0.1";
    else if (url.hostname !== "127.0.0.1") {
      return Promise.reject(new Error(`test fetch refused to leave loopback (${url.hostname})`));
    }
    return fetch(url, init);
  };
}
