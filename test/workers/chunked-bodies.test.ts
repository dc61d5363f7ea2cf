/**
 * Chunked request bodies over a route's limit (issue 18), inside workerd: no Content-Length, so the
 * limit is counted as the bytes stream. Each is a 413 naming the limit, the isolate keeps serving
 * /healthz while the upload is still arriving, and a body within the limit still works.
 * The provider proxy answers the same in the provider's error shape.
 * Bounded: 4 uploads of at most 70 MiB, every wait capped at 10 s.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../workers/index";
import { expectErrorShape, testEnv } from "./helpers";

const MiB = 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024).fill(0x20); // spaces: JSON whitespace, so only the size can refuse it

/** A chunked JSON body of `total` bytes that counts what the service pulled from it. */
function chunkedBody(total: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let sent = 0;
  const head = new TextEncoder().encode('{"messages": [');
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
      sent = head.byteLength;
    },
    pull(controller) {
      if (sent >= total) return controller.close();
      const n = Math.min(CHUNK.byteLength, total - sent);
      controller.enqueue(CHUNK.slice(0, n));
      sent += n;
    },
  });
  return { stream, pulled: () => sent };
}

async function send(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)),
  ]);

const healthz = () => send(new Request("https://service.test/healthz")).then((r) => r.status);

describe("a chunked body over the limit is a 413, and the service keeps answering", () => {
  it.each([
    ["/v1/context/evict", 70, "64 MiB"],
    ["/v1/vision_analyze", 40, "34 MiB"],
  ] as const)(
    "%s: %i MiB chunked is a 413 naming %s; two concurrent /healthz answer meanwhile",
    async (path, mib, limit) => {
      const body = chunkedBody(mib * MiB);
      const request = new Request(`https://service.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: body.stream,
        duplex: "half",
      } as RequestInit);
      expect(request.headers.get("content-length")).toBeNull();
      const answer = within(10_000, `${path} 413`, send(request));
      // While the upload streams in, the isolate still serves other requests.
      while (body.pulled() < 8 * MiB) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await within(5_000, "two /healthz", Promise.all([healthz(), healthz()]))).toEqual([200, 200]);
      const response = await answer;
      expect(response.status).toBe(413);
      const error = expectErrorShape(await response.json());
      expect(error.code).toBe("payload_too_large");
      expect(error.message).toContain(`larger than ${limit}`);
      expect(await within(5_000, "two /healthz after", Promise.all([healthz(), healthz()]))).toEqual([200, 200]);
    },
  );

  it.each([
    ["/anthropic/v1/messages", { "x-api-key": "sk-ant-caller" }],
    ["/openai/v1/chat/completions", { authorization: "Bearer sk-caller" }],
  ] as const)(
    "the provider proxy %s: 70 MiB chunked is a 413 over 64 MiB in the provider's error shape",
    async (path, key) => {
      const body = chunkedBody(70 * MiB);
      const request = new Request(`https://service.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...key },
        body: body.stream,
        duplex: "half",
      } as RequestInit);
      const response = await within(10_000, `${path} 413`, send(request));
      expect(response.status).toBe(413);
      const answer = (await response.json()) as any;
      if (path.startsWith("/anthropic"))
        expect(answer).toMatchObject({ type: "error", error: { type: "request_too_large" } });
      else expect(answer.error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" });
      expect(answer.error.message).toContain("larger than 64 MiB");
      expect(await within(5_000, "two /healthz after", Promise.all([healthz(), healthz()]))).toEqual([200, 200]);
    },
  );

  it("a chunked body within the limit is read whole (counted, not refused)", async () => {
    const text = JSON.stringify({ format: "anthropic", messages: [{ role: "user", content: "x".repeat(2 * MiB) }] });
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.slice(at, at + 60_000));
        at += 60_000;
      },
    });
    const response = await send(
      new Request("https://service.test/v1/context/evict", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { messages: Array<{ content: string }>; retired: number };
    expect(answer.retired).toBe(0);
    expect(answer.messages[0]!.content).toHaveLength(2 * MiB);
  });
});
