/**
 * Deno's fetch for a caller's URL (deno/pinned-fetch.ts) against real sockets: the emulator's plain
 * DNS server plays the runtime's resolver (EMULATOR_DNS_PORT), loopback servers play the sites,
 * and the TLS one is trusted through DENO_CERT (test/fixtures/tls/ca.pem). Run by `deno test` from
 * test/node/deno.test.ts, which starts the emulator.
 */
import { pinnedFetch } from "../../deno/pinned-fetch";
import { AppError } from "../../shared/http/errors";
import { silentLogger } from "../../shared/log";

const emulator = Deno.env.get("EMULATOR_URL");
const dnsPort = Number(Deno.env.get("EMULATOR_DNS_PORT"));
if (!emulator || !dnsPort) throw new Error("EMULATOR_URL and EMULATOR_DNS_PORT are set by test/node/deno.test.ts");
const nameServer = { ipAddr: "127.0.0.1", port: dnsPort };
const tls = new URL("../fixtures/tls/", import.meta.url);

function assert(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

/** A name the emulator's DoH calls public while its plain DNS (the runtime's resolver) says `plain`. */
async function splitName(plain: string[]): Promise<string> {
  const name = `split-${crypto.randomUUID().slice(0, 8)}.example.org`;
  const response = await fetch(`${emulator}/__dns`, {
    method: "POST",
    body: JSON.stringify({ name, A: ["93.184.215.14"], plain: { A: plain } }),
  });
  await response.body?.cancel();
  return name;
}

/** A TCP listener on loopback that only counts the connections it is offered. */
function connectionCounter() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const counter = { port: (listener.addr as Deno.NetAddr).port, connections: 0, close: () => listener.close() };
  void (async () => {
    try {
      for await (const conn of listener) {
        counter.connections++;
        conn.close();
      }
    } catch {
      // closed
    }
  })();
  return counter;
}

async function refusal(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (error) {
    assert(error instanceof AppError, `expected an AppError, got ${error}`);
    return error;
  }
  throw new Error("expected a refusal, got a response");
}

Deno.test("pinned fetch: a name DoH calls public and the runtime's resolver sends to loopback is refused, and nothing connects (http and https)", async () => {
  const site = connectionCounter();
  const pinned = pinnedFetch({ allowPrivate: false, nameServer, log: silentLogger });
  try {
    const name = await splitName(["127.0.0.1"]);
    for (const scheme of ["http", "https"]) {
      const error = await refusal(pinned.fetch(`${scheme}://${name}:${site.port}/secret`, { redirect: "manual" }));
      assert(
        error.status === 403 && error.code === "blocked_private_address",
        `${scheme}: ${error.status} ${error.code}`,
      );
      assert(error.message.includes("127.0.0.1 on this server's resolver"), error.message);
    }
    assert(site.connections === 0, `the loopback site was connected ${site.connections} times`);
  } finally {
    pinned.close();
    site.close();
  }
});

Deno.test("pinned fetch: with private addresses allowed, it connects to the checked address and keeps the URL's host (Host header, TLS name)", async () => {
  const hosts: string[] = [];
  const answer = (request: Request) => {
    hosts.push(new URL(request.url).host);
    return new Response("reached");
  };
  const plain = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, answer);
  const secure = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      cert: await Deno.readTextFile(new URL("cert.pem", tls)),
      key: await Deno.readTextFile(new URL("key.pem", tls)),
      onListen() {},
    },
    answer,
  );
  const pinned = pinnedFetch({ allowPrivate: true, nameServer, log: silentLogger });
  try {
    const name = await splitName(["127.0.0.1"]);
    for (const [scheme, server] of [
      ["http", plain],
      ["https", secure],
    ] as const) {
      const response = await pinned.fetch(`${scheme}://${name}:${server.addr.port}/page`, { redirect: "manual" });
      assert(response.status === 200 && (await response.text()) === "reached", `${scheme}: ${response.status}`);
    }
    assert(
      JSON.stringify(hosts) === JSON.stringify([`${name}:${plain.addr.port}`, `${name}:${secure.addr.port}`]),
      `hosts seen: ${hosts}`,
    );
  } finally {
    pinned.close();
    await plain.shutdown();
    await secure.shutdown();
  }
});

Deno.test("pinned fetch: a metadata address stays refused with private addresses allowed; a name without an address is fetch_failed", async () => {
  const pinned = pinnedFetch({ allowPrivate: true, nameServer, log: silentLogger });
  try {
    const metadata = await refusal(pinned.fetch(`http://${await splitName(["169.254.169.254"])}/latest/`));
    assert(
      metadata.code === "blocked_private_address" && metadata.message.includes("169.254.169.254"),
      metadata.message,
    );
    const missing = await refusal(pinned.fetch(`https://missing-${crypto.randomUUID().slice(0, 8)}.test/`));
    assert(missing.status === 502 && missing.code === "fetch_failed", `${missing.status} ${missing.code}`);
    assert(missing.message.includes("this server's resolver has no address"), missing.message);
  } finally {
    pinned.close();
  }
});

Deno.test("pinned fetch: a silent site sees the tunnel hang up once the fetch gives up", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  // Accepts one connection, reads the TLS hello, never answers, and reports when the tunnel hangs up.
  const hungUp = (async () => {
    const conn = await listener.accept();
    const buffer = new Uint8Array(4096);
    while ((await conn.read(buffer)) !== null);
    conn.close();
    return true;
  })();
  const pinned = pinnedFetch({ allowPrivate: true, nameServer, log: silentLogger });
  try {
    const name = await splitName(["127.0.0.1"]);
    let failed = false;
    try {
      await pinned.fetch(`https://${name}:${port}/`, { signal: AbortSignal.timeout(300) });
    } catch {
      failed = true;
    }
    assert(failed, "the fetch to a silent site should fail at its deadline");
    const closed = await Promise.race([hungUp, new Promise<false>((done) => setTimeout(() => done(false), 3_000))]);
    assert(closed, "the tunnel kept the silent site's socket open");
  } finally {
    pinned.close();
    listener.close();
  }
});

Deno.test("pinned fetch: the tunnel refuses a CONNECT without this process's token (another local process cannot use it)", async () => {
  const site = connectionCounter();
  const pinned = pinnedFetch({ allowPrivate: true, nameServer, log: silentLogger });
  try {
    const tunnel = new URL(pinned.tunnelUrl());
    const heads = [
      `CONNECT 127.0.0.1:${site.port} HTTP/1.1\r\nHost: 127.0.0.1:${site.port}\r\n\r\n`,
      `CONNECT 127.0.0.1:${site.port} HTTP/1.1\r\nProxy-Authorization: Basic ${btoa("guessed:")}\r\n\r\n`,
    ];
    for (const head of heads) {
      const conn = await Deno.connect({ hostname: tunnel.hostname, port: Number(tunnel.port) });
      await conn.write(new TextEncoder().encode(head));
      const reply = new Uint8Array(256);
      const read = (await conn.read(reply)) ?? 0;
      conn.close();
      const status = new TextDecoder().decode(reply.subarray(0, read)).split("\r\n")[0];
      assert(status === "HTTP/1.1 407 Proxy Authentication Required", `tunnel answered ${status}`);
    }
    assert(site.connections === 0, `the site was connected ${site.connections} times`);
  } finally {
    pinned.close();
    site.close();
  }
});
