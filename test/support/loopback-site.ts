/**
 * A page on 127.0.0.1 for the Deno tests whose names the emulator's DNS sends to loopback: it
 * records the `Host` of every request and counts connections, so a test sees what was reached and
 * under which name.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackSite {
  port: number;
  /** The `Host` header of each request, in order. */
  hosts: string[];
  /** Connections accepted so far. */
  connections(): number;
  close(): void;
}

/** The text every page of the site contains. */
export const LOOPBACK_SITE_TEXT = "reached the loopback site";

export async function startLoopbackSite(): Promise<LoopbackSite> {
  const hosts: string[] = [];
  let connections = 0;
  const site = createServer((request, response) => {
    hosts.push(request.headers.host ?? "");
    response.writeHead(200, { "content-type": "text/html" });
    response.end(`<html><head><title>Internal</title></head><body><p>${LOOPBACK_SITE_TEXT}</p></body></html>`);
  });
  site.on("connection", () => connections++);
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (site.address() as AddressInfo).port,
    hosts,
    connections: () => connections,
    close() {
      site.closeAllConnections();
      site.close();
    },
  };
}
