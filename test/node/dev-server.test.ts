/**
 * The service as `npm run dev` runs it: wrangler dev (its own bundler, real workerd, local KV and
 * Durable Objects), driven over real HTTP by an outside client pointed at the loopback emulator.
 * This catches what the vitest pool cannot: bundling differences (e.g. WASM imports) and startup.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack";
import { postJson } from "../support/emulator-client";

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const post = (path: string, body: unknown) => postJson(`${stack.url}${path}`, body);

describe("wrangler dev", () => {
  it("answers /healthz as workerd", async () => {
    const response = await fetch(`${stack.url}/healthz`);
    expect(await response.json()).toMatchObject({ ok: true, runtime: "workerd" });
  });

  it("pays the provider once for a repeated search", async () => {
    const token = `dev${Date.now().toString(36)}`;
    const first = await post("/v1/web_search", { query: `dev server ${token}` });
    const second = await post("/v1/web_search", { query: `dev server ${token}` });
    expect([first.headers.get("x-cache"), second.headers.get("x-cache")]).toEqual(["MISS", "HIT"]);
    expect(await stack.providerCalls("tavily", token)).toBe(1);
  });

  it("fits an image with the bundled WASM codecs", async () => {
    const response = await post("/v1/vision_analyze", {
      image: { url: "http://127.0.0.1:1/never-fetched.png" },
      session_id: "dev",
    });
    // Loopback image URLs are refused by the gate before any fetch: the route and its WASM module load.
    expect(response.status).toBe(403);
    const png = await fetch(`${stack.emulatorUrl}/pages/image.png?w=2400&h=1600`).then((r) => r.arrayBuffer());
    const fitted = await post("/v1/vision_analyze", {
      image: { data: Buffer.from(png).toString("base64") },
      session_id: "dev",
    });
    const body = (await fitted.json()) as any;
    expect(fitted.status).toBe(200);
    expect([body.image.width, body.image.height]).toEqual([1568, 1045]);
    expect(body.image.data_url_bytes).toBeLessThanOrEqual(262_144);
  });
});

/**
 * POSTs `total` bytes of JSON whitespace with `Transfer-Encoding: chunked` (no length), as a client
 * streaming a huge body would; resolves with the status and body, or rejects after `ms`.
 */
function postChunked(url: string, total: number, ms: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    let finished = false;
    const timer = setTimeout(() => {
      finished = true;
      req.destroy();
      reject(new Error(`no answer within ${ms} ms (${sent} bytes sent)`));
    }, ms);
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      },
      (res) => {
        let body = "";
        res.on("data", (part) => (body += part));
        res.on("end", () => {
          finished = true;
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on("error", (error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      reject(error);
    });
    req.write('{"messages": [');
    const pump = () => {
      while (sent < total && !finished) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!finished) req.end();
    };
    pump();
  });
}

describe("wrangler dev: chunked bodies over the limit (issue 18)", () => {
  // wrangler dev's proxy failed the exchange when the Worker answered mid-upload: "503 Your worker
  // restarted mid-request", and uploads hung after. Two rounds, since that failed about half the time.
  it.each([
    ["/v1/context/evict", 70, "64 MiB"],
    ["/v1/vision_analyze", 40, "34 MiB"],
    ["/v1/context/evict", 70, "64 MiB"],
    ["/v1/vision_analyze", 40, "34 MiB"],
  ] as const)(
    "%s: %i MiB chunked is a 413 naming %s, and /healthz answers two concurrent requests after",
    async (path, mib, limit) => {
      const { status, body } = await postChunked(`${stack.url}${path}`, mib * 1024 * 1024, 60_000);
      expect(status, body.slice(0, 200)).toBe(413);
      expect(JSON.parse(body).error).toMatchObject({ code: "payload_too_large" });
      expect(JSON.parse(body).error.message).toContain(`larger than ${limit}`);
      const healthz = () => fetch(`${stack.url}/healthz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status);
      expect(await Promise.all([healthz(), healthz()])).toEqual([200, 200]);
    },
    90_000,
  );
});

describe("wrangler dev: Expect: 100-continue (curl sends it with every body over 1 MiB)", () => {
  /** A POST as curl makes it: the headers, then the body once 100 Continue came (or after 1 s). */
  const postExpecting = (path: string, headers: Record<string, string>, body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        `${stack.url}${path}`,
        { method: "POST", headers: { ...headers, expect: "100-continue" } },
        (res) => {
          let text = "";
          res.on("data", (chunk) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.on("continue", () => req.writableEnded || req.end(body));
      setTimeout(() => req.writableEnded || req.end(body), 1000);
    });

  it.each([
    ["a Messages call of 2 MB", "/anthropic/v1/messages", { "x-api-key": "sk-ant-caller" }],
    ["a forwarded path", "/openai/v1/echo/expect", { authorization: "Bearer sk-caller" }],
  ])("%s is answered by the provider, not a 500 (the handshake is not forwarded)", async (_, path, headers) => {
    const body = JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: `expect ${"x".repeat(2_000_000)}` }],
    });
    const answer = await postExpecting(path, { "content-type": "application/json", ...headers }, body);
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
  });
});
