/**
 * Deno's fetch for a caller's URL (AppPorts.untrustedFetch). The gate has checked the name through
 * DNS-over-HTTPS; here it is resolved once more, with the runtime's own resolver
 * (`Deno.resolveDns`), every address must pass the gate's address rules, and the connection goes
 * only to a checked address, so the name is never resolved again between the check and the
 * connect (docs/security.md, "time of check against time of use").
 *
 * - `http:` — a client whose TCP transport is pinned to the checked address; the URL, and so the
 *   `Host` header, stay as they are.
 * - `https:` — a client whose proxy is the in-process CONNECT tunnel below. The tunnel admits a
 *   CONNECT only with this fetch's token and only for its host and port, and connects to this
 *   fetch's checked addresses; TLS and SNI stay end to end between fetch and the site.
 *
 * Each fetch has its own client, closed when its body ends, so no pooled connection serves a
 * second, unchecked fetch.
 */
import { AppError } from "../shared/http/errors";
import type { FetchFn, Logger } from "../shared/ports";
import { classifyIpLiteral } from "../shared/safety/ip";
import { REACHED_LOCAL } from "../shared/safety/safe-fetch";
import { isAllowedAddress } from "../shared/safety/ssrf";

export interface PinnedFetchOptions {
  /** `security.allow_private_urls`. */
  allowPrivate: boolean;
  /** The DNS server to ask (`DENO_DNS_SERVER`); default the system's (`/etc/resolv.conf`). */
  nameServer?: { ipAddr: string; port: number };
  log: Logger;
}

export interface PinnedFetch {
  fetch: FetchFn;
  /** The tunnel's proxy URL (its tests knock on it without a token). */
  tunnelUrl(): string;
  /** Stops the tunnel's listener (tests; the server keeps it for its life). */
  close(): void;
}

/**
 * @example
 * const pinned = pinnedFetch({ allowPrivate: false, log });
 * await pinned.fetch("https://example.com/", { redirect: "manual" }); // connects only to a checked address
 */
export function pinnedFetch(options: PinnedFetchOptions): PinnedFetch {
  const tunnel = new ConnectTunnel(options.log);
  const fetchPinned: FetchFn = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const addresses = await checkedAddresses(url, options, init?.signal ?? undefined);
    const reached = (response: Response) => {
      // Every address passed checkedAddresses; one that is not public passed only as a private one.
      if (addresses.some((address) => classifyIpLiteral(address)?.kind !== "public")) REACHED_LOCAL.add(response);
      return response;
    };
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    if (url.protocol === "https:") {
      const admission = tunnel.admit(`${url.hostname}:${port}`.toLowerCase(), addresses, port);
      const client = Deno.createHttpClient({
        proxy: { url: tunnel.url(), basicAuth: { username: admission.token, password: "" } },
      });
      return reached(await fetchWith(client, input, init, admission.release));
    }
    // Each address in turn, as the runtime's own connect would; a GET or HEAD is safe to send again.
    for (const [i, address] of addresses.entries()) {
      const client = Deno.createHttpClient({ proxy: { transport: "tcp", hostname: bracketed(address), port } });
      try {
        return reached(await fetchWith(client, input, init, () => {}));
      } catch (error) {
        if (i === addresses.length - 1 || init?.signal?.aborted) throw error;
      }
    }
    throw unreachable(url.hostname, "it has no address");
  };
  return { fetch: fetchPinned, tunnelUrl: () => tunnel.url(), close: () => tunnel.close() };
}

/** The addresses `url` may be connected to: its literal, or every answer of the runtime's resolver. */
async function checkedAddresses(url: URL, options: PinnedFetchOptions, signal?: AbortSignal): Promise<string[]> {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const literal = classifyIpLiteral(host);
  if (literal) {
    if (!isAllowedAddress(literal, options.allowPrivate))
      throw refused(`The host ${url.hostname} is not a public address (${literal.label}), so it is not fetched.`);
    return [host];
  }
  const addresses = await resolve(host, options, signal);
  if (addresses.length === 0)
    throw unreachable(host, "this server's resolver has no address for it; check the URL and try again");
  for (const address of addresses) {
    const cls = classifyIpLiteral(address);
    if (!cls || !isAllowedAddress(cls, options.allowPrivate)) {
      throw refused(
        `The host ${host} resolves to ${address} on this server's resolver, which is not a public address (${cls?.label ?? "not an address"}), so it is not fetched.`,
      );
    }
  }
  return addresses;
}

async function resolve(host: string, options: PinnedFetchOptions, signal?: AbortSignal): Promise<string[]> {
  const ask = (type: "A" | "AAAA") =>
    Deno.resolveDns(host, type, { nameServer: options.nameServer, signal }).catch((error: unknown) => {
      // No record of one type is an empty answer; both empty is "no address" above.
      if (error instanceof Deno.errors.NotFound) return [] as string[];
      throw error;
    });
  try {
    const [a, aaaa] = await Promise.all([ask("A"), ask("AAAA")]);
    return [...a, ...aaaa];
  } catch (error) {
    if (signal?.aborted) throw error;
    options.log.warn("runtime_dns_failed", { host, error: String(error).slice(0, 200) });
    throw unreachable(host, "this server's resolver did not answer for it; try again later");
  }
}

/** Fetches with `client`, which is closed (and `release` called) when the body ends or the fetch fails. */
async function fetchWith(
  client: Deno.HttpClient,
  input: Request | string | URL,
  init: RequestInit | undefined,
  release: () => void,
): Promise<Response> {
  let closed = false;
  const done = () => {
    if (closed) return;
    closed = true;
    release();
    client.close();
  };
  let response: Response;
  try {
    // Deno's fetch takes its client in the init (a Deno extension of RequestInit).
    response = await fetch(input, { ...init, client } as RequestInit);
  } catch (error) {
    done();
    throw error;
  }
  if (response.body === null) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          controller.close();
          done();
        } else controller.enqueue(value);
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason);
      } finally {
        done();
      }
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

const bracketed = (address: string) => (address.includes(":") ? `[${address}]` : address);

function refused(message: string): AppError {
  return new AppError(403, "blocked_private_address", message);
}

function unreachable(host: string, why: string): AppError {
  return new AppError(502, "fetch_failed", `The page at ${host} could not be fetched: ${why}.`);
}

interface Admission {
  authority: string;
  addresses: readonly string[];
  port: number;
}

/** A CONNECT head is a line and a few headers; anything longer is not our client. */
const MAX_HEAD_BYTES = 8 * 1024;
/** The client sends its CONNECT at once; a connection that does not is dropped. */
const HEAD_TIMEOUT_MS = 10_000;
/** An admission not released by its fetch (it never ended) is dropped after this. */
const ADMISSION_MS = 10 * 60_000;

/**
 * An HTTP CONNECT proxy on 127.0.0.1 for this process's own fetches: each CONNECT must carry an
 * admitted token (as the proxy user name) for exactly its host and port, and is connected to that
 * admission's checked addresses, never to a name.
 */
class ConnectTunnel {
  private listener: Deno.Listener | null = null;
  private readonly admitted = new Map<string, Admission>();

  constructor(private readonly log: Logger) {}

  url(): string {
    if (!this.listener) {
      this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      void this.accept(this.listener);
    }
    return `http://127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
  }

  admit(authority: string, addresses: readonly string[], port: number): { token: string; release(): void } {
    const token = crypto.randomUUID().replaceAll("-", "");
    this.admitted.set(token, { authority, addresses, port });
    const timer = setTimeout(() => this.admitted.delete(token), ADMISSION_MS);
    Deno.unrefTimer(timer);
    return {
      token,
      release: () => {
        clearTimeout(timer);
        this.admitted.delete(token);
      },
    };
  }

  close(): void {
    this.listener?.close();
    this.listener = null;
  }

  private async accept(listener: Deno.Listener): Promise<void> {
    try {
      for await (const conn of listener) void this.serve(conn);
    } catch {
      // The listener was closed.
    }
  }

  private async serve(conn: Deno.Conn): Promise<void> {
    const timer = setTimeout(() => conn.close(), HEAD_TIMEOUT_MS);
    let upstream: Deno.Conn | null = null;
    try {
      const request = await readHead(conn);
      clearTimeout(timer);
      const admission = request && this.admission(request.head);
      if (!request || !admission) return await answer(conn, "407 Proxy Authentication Required");
      upstream = await connectFirst(admission.addresses, admission.port);
      if (!upstream) return await answer(conn, "502 Bad Gateway");
      await writeAll(conn, new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      if (request.rest.length > 0) await writeAll(upstream, request.rest);
      const up = upstream;
      const pipes = [conn.readable.pipeTo(up.writable), up.readable.pipeTo(conn.writable)];
      // One side done (the client's fetch ended, or the site hung up) ends the tunnel: a site that
      // stays silent after the client left must not hold its socket open.
      await Promise.race(pipes.map((pipe) => pipe.catch(() => undefined)));
      closeQuietly(conn);
      closeQuietly(up);
      await Promise.allSettled(pipes);
    } catch (error) {
      this.log.warn("tunnel_failed", { error: String(error).slice(0, 200) });
    } finally {
      clearTimeout(timer);
      closeQuietly(conn);
      if (upstream) closeQuietly(upstream);
    }
  }

  /** The admission a CONNECT head names with its token, when it is for that admission's host and port. */
  private admission(head: string): Admission | null {
    const [line = "", ...headers] = head.split("\r\n");
    const authority = /^CONNECT (\S+) HTTP\/1\.[01]$/.exec(line)?.[1];
    if (!authority) return null;
    const auth = headers.find((header) => /^proxy-authorization:/i.test(header));
    const credentials = auth && /^proxy-authorization:\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth)?.[1];
    if (!credentials) return null;
    let token: string;
    try {
      token = atob(credentials).split(":")[0] ?? "";
    } catch {
      return null;
    }
    const admission = this.admitted.get(token);
    return admission && admission.authority === authority.toLowerCase() ? admission : null;
  }
}

async function readHead(conn: Deno.Conn): Promise<{ head: string; rest: Uint8Array } | null> {
  const buffer = new Uint8Array(MAX_HEAD_BYTES);
  let length = 0;
  while (length < buffer.length) {
    const read = await conn.read(buffer.subarray(length));
    if (read === null) return null;
    length += read;
    for (let i = Math.max(0, length - read - 3); i + 3 < length; i++) {
      if (buffer[i] === 13 && buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10) {
        return { head: new TextDecoder().decode(buffer.subarray(0, i)), rest: buffer.slice(i + 4, length) };
      }
    }
  }
  return null;
}

async function connectFirst(addresses: readonly string[], port: number): Promise<Deno.Conn | null> {
  for (const address of addresses) {
    try {
      return await Deno.connect({ hostname: address, port });
    } catch {
      // The next checked address, as a runtime's own connect would.
    }
  }
  return null;
}

async function answer(conn: Deno.Conn, status: string): Promise<void> {
  await writeAll(
    conn,
    new TextEncoder().encode(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`),
  );
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length; ) written += await conn.write(bytes.subarray(written));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Closed already by the other side's end of the pipe.
  }
}
