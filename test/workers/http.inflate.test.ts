/**
 * Compressed request bodies inside workerd (issue 42): inflated in slices, byte for byte, with the
 * route's limit exact; and a 1 MB gzip body that inflates to 1 GiB is a 413 in each route's own
 * shape, on every route that reads `Content-Encoding`. (The memory it takes is measured over real
 * HTTP in test/node/http.inflate.test.ts.)
 */
import { beforeAll, describe, expect, it } from "vitest";
import { readBodyBytes } from "../../shared/http/body";
import { AppError } from "../../shared/http/errors";
import { call } from "./helpers";

const MiB = 1024 * 1024;

async function compressed(parts: Iterable<Uint8Array>, format: CompressionFormat): Promise<Uint8Array> {
  const stream = new CompressionStream(format);
  const writer = stream.writable.getWriter();
  const out = new Response(stream.readable).arrayBuffer();
  for (const part of parts) await writer.write(part as Uint8Array<ArrayBuffer>);
  await writer.close();
  return new Uint8Array(await out);
}

/** `n` bytes that compress the way a body with images does: a quarter text, the rest base64-like noise. */
function bodyBytes(n: number): Uint8Array {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
  for (let i = 0; i < n; i++) bytes[i] = i % 4096 < 1024 ? 97 + ((i >> 5) % 26) : 48 + (bytes[i]! & 63);
  return bytes;
}

const request = (body: Uint8Array, coding: string) =>
  new Request("https://service.test/x", {
    method: "POST",
    headers: { "content-encoding": coding },
    body: body as Uint8Array<ArrayBuffer>,
  });

const sha256 = async (bytes: Uint8Array) =>
  Buffer.from(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)).toString("hex");

let bomb: Uint8Array;

beforeAll(async () => {
  const zeros = new Uint8Array(MiB);
  bomb = await compressed(
    (function* () {
      for (let i = 0; i < 1024; i++) yield zeros;
    })(),
    "gzip",
  );
}, 60_000);

describe("readBodyBytes in workerd", () => {
  it.each(["gzip", "deflate"] as const)(
    "inflates 5 MiB of %s byte for byte, exactly up to the limit",
    async (format) => {
      const original = bodyBytes(5 * MiB + 123);
      const packed = await compressed([original], format);
      const inflated = await readBodyBytes(request(packed, format), original.byteLength);
      expect(inflated.byteLength).toBe(original.byteLength);
      expect(await sha256(inflated)).toBe(await sha256(original));
      const over = await readBodyBytes(request(packed, format), original.byteLength - 1).catch((error) => error);
      expect(over).toBeInstanceOf(AppError);
      expect((over as AppError).status).toBe(413);
    },
  );

  it("refuses the 1 GiB bomb at a 1 MiB limit", async () => {
    expect(bomb.byteLength).toBeLessThan(1_100_000);
    const refused = await readBodyBytes(request(bomb, "gzip"), MiB).catch((error) => error);
    expect((refused as AppError).status).toBe(413);
  });
});

describe("a 1 MB gzip body that inflates to 1 GiB, on every route that reads Content-Encoding", () => {
  const mcpHeaders = { accept: "application/json, text/event-stream" };
  it.each([
    ["/v1/web_search", "1 MiB", {}],
    ["/v1/context/evict", "64 MiB", {}],
    ["/v1/vision_analyze", "34 MiB", {}],
  ] as const)("%s: 413 payload_too_large naming %s (api.md shape)", async (path, limit, headers) => {
    const response = await call(path, {
      raw: bomb as Uint8Array<ArrayBuffer>,
      headers: { "content-encoding": "gzip", ...headers },
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      success: false,
      error: { code: "payload_too_large", message: `The request body is larger than ${limit}; send a smaller body.` },
    });
  });

  it("/mcp: 413 as a JSON-RPC error naming 34 MiB", async () => {
    const response = await call("/mcp", {
      raw: bomb as Uint8Array<ArrayBuffer>,
      headers: { "content-encoding": "gzip", ...mcpHeaders },
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { code: number; message: string } };
    expect(body.error.message).toContain("larger than 34 MiB");
  });

  it("/anthropic/v1/messages: 413 in Anthropic's shape", async () => {
    const response = await call("/anthropic/v1/messages", {
      raw: bomb as Uint8Array<ArrayBuffer>,
      headers: { "content-encoding": "gzip", "x-api-key": "sk-ant-caller-1" },
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "request_too_large", message: "The request body is larger than 64 MiB; send a smaller body." },
    });
  });

  it("/openai/v1/chat/completions: 413 in OpenAI's shape", async () => {
    const response = await call("/openai/v1/chat/completions", {
      raw: bomb as Uint8Array<ArrayBuffer>,
      headers: { "content-encoding": "gzip", authorization: "Bearer sk-caller-1" },
    });
    expect(response.status).toBe(413);
    const body = (await response.json()) as { error: { type: string; code: string; message: string } };
    expect([body.error.type, body.error.code, body.error.message]).toEqual([
      "invalid_request_error",
      "payload_too_large",
      "The request body is larger than 64 MiB; send a smaller body.",
    ]);
  });
});
