/**
 * safeFetch against a real loopback origin server.
 *
 * The origin listens on 127.0.0.1, which the gate refuses by default. Two honest ways in, both
 * visible in each test:
 * - `allowPrivate: true` (the operator setting): loopback opens, cloud metadata stays closed.
 * - a public-looking name (`site.test`) that the loopback DoH emulator resolves to a public
 *   address, with `allowPrivate: false`. The gate checks the NAME exactly as in production; the
 *   test fetch (`loopbackFetch`) then delivers requests for that name to the loopback origin.
 *   This models a public site whose redirects point inward, without leaving the machine.
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import { createDnsResolver } from "../../shared/safety/dns";
import type { DnsResolver } from "../../shared/ports";
import type { GateOptions } from "../../shared/safety/gate";
import { FetchLimitError, toRefusal } from "../../shared/safety/refusal";
import { type SafeFetchOptions, safeFetch } from "../../shared/safety/safe-fetch";
import { until } from "../support/emulator-client";
import { closeServer, type DohEmulator, listen, loopbackFetch, startDohEmulator } from "./safety.support";

const SECRET_KEY = `sk-proj-${"Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9".repeat(2)}`;

let origin = "";
let port = 0;
let closeOrigin: () => Promise<void>;
let doh: DohEmulator;
let resolver: DnsResolver;
const hits = new Map<string, number>();
const streamed = { bytes: 0, finished: false, closedEarly: false };

function redirect(res: ServerResponse, location: string, status = 302): void {
  res.writeHead(status, { location }).end();
}

beforeAll(async () => {
  doh = await startDohEmulator({
    "site.test": { A: ["93.184.215.14"] },
    "other.test": { A: ["93.184.215.15"] },
    "loopback.test": { A: ["127.0.0.1"] },
    "ads.blocked.test": { A: ["93.184.215.16"] },
  });
  resolver = createDnsResolver({ url: doh.url, fetch, clock: Date.now, timeoutMs: 1000 });
  const started = await listen((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const chain = /^\/chain\/(\d+)$/.exec(path);
    if (chain) {
      const left = Number(chain[1]);
      if (left > 0) redirect(res, `/chain/${left - 1}`);
      else res.end("end of chain");
      return;
    }
    switch (path) {
      case "/ok":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<h1>hello</h1>");
        return;
      case "/admin":
        res.end("internal admin page");
        return;
      case "/to-metadata":
        redirect(res, "http://169.254.169.254/latest/meta-data/iam/security-credentials/");
        return;
      case "/to-metadata-v6":
        redirect(res, "http://[fd00:ec2::254]/latest/meta-data/", 307);
        return;
      case "/to-loopback-literal":
        redirect(res, `http://127.0.0.1:${port}/admin`);
        return;
      case "/to-loopback-name":
        redirect(res, `http://loopback.test:${port}/admin`, 301);
        return;
      case "/to-private":
        redirect(res, "http://10.0.0.1/");
        return;
      case "/to-blocked":
        redirect(res, `http://ads.blocked.test:${port}/ok`);
        return;
      case "/loop-a":
        redirect(res, "/loop-b");
        return;
      case "/loop-b":
        redirect(res, "/loop-a#again");
        return;
      case "/dir/relative":
        redirect(res, "../ok", 303);
        return;
      case "/to-secret":
        redirect(res, `/next?api_key=${SECRET_KEY}`);
        return;
      case "/to-ftp":
        redirect(res, "ftp://files.example.com/pub/");
        return;
      case "/to-other-origin":
        redirect(res, `http://other.test:${port}/echo-auth`);
        return;
      case "/to-echo":
        redirect(res, "/echo-auth");
        return;
      case "/echo-auth":
        res.end(
          JSON.stringify({
            authorization: req.headers.authorization ?? null,
            cookie: req.headers.cookie ?? null,
            "proxy-authorization": req.headers["proxy-authorization"] ?? null,
            accept: req.headers.accept ?? null,
          }),
        );
        return;
      case "/big-declared":
        res.writeHead(200, { "content-length": String(10 * 1024 * 1024) });
        res.write("x".repeat(1024));
        return;
      case "/big-stream": {
        // Up to 64 MiB in 64 KiB chunks with no content-length: only a reader that stops early
        // and cancels keeps this from being read (or buffered) in full.
        streamed.bytes = 0;
        streamed.finished = false;
        streamed.closedEarly = false;
        const chunk = Buffer.alloc(64 * 1024, 97);
        res.writeHead(200, { "content-type": "text/plain" });
        res.on("close", () => {
          if (!streamed.finished) streamed.closedEarly = true;
        });
        const pump = (): void => {
          while (streamed.bytes < 64 * 1024 * 1024) {
            streamed.bytes += chunk.length;
            if (!res.write(chunk)) {
              res.once("drain", pump);
              return;
            }
          }
          streamed.finished = true;
          res.end();
        };
        pump();
        return;
      }
      case "/exact":
        res.end("y".repeat(1000));
        return;
      case "/slow":
        // Never answers: only the caller's deadline ends the fetch (closeServer drops the socket).
        return;
      case "/image":
        res.writeHead(200, { "content-type": "application/x-msdownload" }).end("MZ");
        return;
      case "/missing":
        res.writeHead(404).end("secret upstream body");
        return;
      default:
        res.writeHead(404).end();
    }
  });
  port = started.port;
  origin = `http://127.0.0.1:${port}`;
  closeOrigin = () => closeServer(started.server);
});

afterAll(async () => {
  await closeOrigin();
  await doh.close();
});

function options(gate: Partial<GateOptions> = {}, extra: Partial<SafeFetchOptions> = {}): SafeFetchOptions {
  return {
    fetch: loopbackFetch(["site.test", "other.test", "loopback.test", "ads.blocked.test"]),
    gate: { allowPrivate: true, resolver, blocklist: [], ...gate },
    maxBytes: 1024 * 1024,
    timeoutMs: 3000,
    ...extra,
  };
}

/** A public-looking start: loopback stays closed, the gate only sees `site.test`. */
const viaPublicName = (path: string) => `http://site.test:${port}${path}`;

async function refusal(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    const r = toRefusal(error);
    if (r === null) throw error;
    return r;
  }
  throw new Error("expected a refusal");
}

describe("safeFetch", () => {
  it("fetches a page through the public-name setup, so the refusals below are the gate's doing", async () => {
    const page = await safeFetch(viaPublicName("/ok"), options({ allowPrivate: false }));
    expect(page.status).toBe(200);
    expect(new TextDecoder().decode(page.body)).toBe("<h1>hello</h1>");
    expect(page.finalUrl).toBe(viaPublicName("/ok"));
  });

  it("refuses a redirect to the metadata address even with allowPrivate", async () => {
    const log: string[] = [];
    const r = await refusal(safeFetch(`${origin}/to-metadata`, { ...options(), fetch: loopbackFetch([], log) }));
    expect(r).toMatchObject({ code: "blocked_private_address", status: 403 });
    expect(r.message).toContain("169.254.169.254");
    expect(log).toEqual([`${origin}/to-metadata`]); // the metadata URL was never requested
    expect(await refusal(safeFetch(`${origin}/to-metadata-v6`, options()))).toMatchObject({
      code: "blocked_private_address",
    });
  });

  it("refuses a redirect to a private address when the start was public", async () => {
    const adminBefore = hits.get("/admin") ?? 0;
    for (const path of ["/to-loopback-literal", "/to-loopback-name", "/to-private"]) {
      const r = await refusal(safeFetch(viaPublicName(path), options({ allowPrivate: false })));
      expect(r.code, path).toBe("blocked_private_address");
    }
    expect(hits.get("/admin") ?? 0).toBe(adminBefore);
  });

  it("refuses a redirect to a blocklisted domain with blocked_by_policy", async () => {
    const r = await refusal(
      safeFetch(viaPublicName("/to-blocked"), options({ allowPrivate: false, blocklist: ["blocked.test"] })),
    );
    expect(r).toMatchObject({ code: "blocked_by_policy", status: 403 });
  });

  it("refuses the first URL when its own host is blocklisted", async () => {
    const r = await refusal(safeFetch(viaPublicName("/ok"), options({ allowPrivate: false, blocklist: ["*.test"] })));
    expect(r.code).toBe("blocked_by_policy");
  });

  it("detects a redirect loop", async () => {
    const r = await refusal(safeFetch(`${origin}/loop-a`, options()));
    expect(r).toMatchObject({ code: "fetch_failed", status: 502 });
    expect(r.message).toContain("loop");
  });

  it("follows exactly 5 redirects and refuses the 6th", async () => {
    const page = await safeFetch(`${origin}/chain/5`, options());
    expect(new TextDecoder().decode(page.body)).toBe("end of chain");
    expect(page.finalUrl).toBe(`${origin}/chain/0`);
    const before = hits.get("/chain/0") ?? 0;
    const r = await refusal(safeFetch(`${origin}/chain/6`, options()));
    expect(r.code).toBe("fetch_failed");
    expect(r.message).toContain("more than 5");
    expect(hits.get("/chain/0") ?? 0).toBe(before);
  });

  it("follows a relative redirect", async () => {
    const page = await safeFetch(`${origin}/dir/relative`, options());
    expect(page.finalUrl).toBe(`${origin}/ok`);
    expect(new TextDecoder().decode(page.body)).toBe("<h1>hello</h1>");
  });

  it("refuses a redirect whose Location carries a secret, without following it", async () => {
    const before = hits.get("/next") ?? 0;
    const r = await refusal(safeFetch(`${origin}/to-secret`, options()));
    expect(r).toMatchObject({ code: "secret_in_url", status: 422 });
    expect(r.message).not.toContain(SECRET_KEY);
    expect(hits.get("/next") ?? 0).toBe(before);
  });

  it("refuses a redirect to a non-http scheme as fetch_failed", async () => {
    expect(await refusal(safeFetch(`${origin}/to-ftp`, options()))).toMatchObject({ code: "fetch_failed" });
  });

  it("drops the Authorization, Cookie and Proxy-Authorization headers on a cross-origin redirect, keeps the others", async () => {
    const page = await safeFetch(
      `${origin}/to-other-origin`,
      options(
        {},
        {
          headers: {
            authorization: "Bearer t0ken-for-origin",
            cookie: "session=c00kie-for-origin",
            "proxy-authorization": "Basic cHJveHk6b3JpZ2lu",
            accept: "text/html",
          },
        },
      ),
    );
    expect(JSON.parse(new TextDecoder().decode(page.body))).toEqual({
      authorization: null,
      cookie: null,
      "proxy-authorization": null,
      accept: "text/html",
    });
  });

  it("keeps the Cookie header on a same-origin redirect", async () => {
    const page = await safeFetch(`${origin}/to-echo`, options({}, { headers: { cookie: "session=same-origin" } }));
    expect(JSON.parse(new TextDecoder().decode(page.body))).toMatchObject({ cookie: "session=same-origin" });
  });

  it("refuses a body over maxBytes as too_large and stops reading the stream", async () => {
    const r = await refusal(safeFetch(`${origin}/big-stream`, options({}, { maxBytes: 100_000 })));
    expect(r).toMatchObject({ code: "too_large", status: 413 });
    // The site sees the connection close before its stream ended.
    await until(
      async () => streamed.closedEarly,
      () => `the stream was never cut: ${JSON.stringify(streamed)}`,
    );
    expect(streamed.bytes).toBeLessThan(16 * 1024 * 1024);
  });

  it("refuses a declared content-length over maxBytes before reading", async () => {
    const error = await safeFetch(`${origin}/big-declared`, options({}, { maxBytes: 4096 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchLimitError);
    expect((error as FetchLimitError).code).toBe("too_large");
  });

  it("accepts a body of exactly maxBytes", async () => {
    const page = await safeFetch(`${origin}/exact`, options({}, { maxBytes: 1000 }));
    expect(page.body.byteLength).toBe(1000);
  });

  it("turns a page that never answers into fetch_failed at the deadline", async () => {
    const r = await refusal(safeFetch(`${origin}/slow`, options({}, { timeoutMs: 200 })));
    expect(r.code).toBe("fetch_failed");
    expect(r.message).toContain("within 0.2 s");
  });

  it("reports a non-2xx final status without echoing the upstream body", async () => {
    const r = await refusal(safeFetch(`${origin}/missing`, options()));
    expect(r.code).toBe("fetch_failed");
    expect(r.message).toContain("404");
    expect(r.message).not.toContain("secret upstream body");
  });

  it("refuses a content type the caller does not read", async () => {
    const r = await refusal(
      safeFetch(`${origin}/image`, options({}, { acceptContentType: (t) => t.startsWith("image/") })),
    );
    expect(r).toMatchObject({ code: "unsupported_content", status: 415 });
    expect(r.message).toContain("application/x-msdownload");
  });

  it("runs the whole gate on the first URL too (a cache hit upstream never skips it)", async () => {
    expect(await refusal(safeFetch(`${origin}/ok`, options({ allowPrivate: false })))).toMatchObject({
      code: "blocked_private_address",
    });
    expect(await refusal(safeFetch(`${origin}/ok?token=${SECRET_KEY}`, options()))).toMatchObject({
      code: "secret_in_url",
    });
    expect(await refusal(safeFetch("file:///etc/passwd", options()))).toMatchObject({
      code: "invalid_request",
      status: 400,
    });
  });

  it("is not fooled into treating an unrelated error as a refusal", () => {
    expect(toRefusal(new Error("boom"))).toBeNull();
    expect(toRefusal(new AppError(500, "internal_error", "x"))).toBeNull();
  });
});
