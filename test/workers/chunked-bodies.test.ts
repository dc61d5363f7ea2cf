/**
 * Chunked request bodies over a route's limit (issue 18), inside workerd: no Content-Length, so the
 * limit is counted as the bytes stream. Each is a 413 naming the limit, the isolate keeps serving
 * /healthz while the upload is still arriving, and a body within the limit still works.
 * The provider proxy answers the same in the provider's error shape.
 * Bounded: 4 uploads of at most 70 MiB. No wait is timed: an upload that stopped the isolate would
 * leave /healthz unanswered, and the test would fail at its timeout.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../workers/index";
import { expectErrorShape, testEnv } from "./helpers";

const MiB = 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024).fill(0x20); // spaces: JSON whitespace, so only the size can refuse it

/**
 * A chunked JSON body of `total` bytes. With `holdAt`, it stops sending once that many bytes were
 * pulled (`held` resolves then) until `release()`: the upload is provably still arriving meanwhile.
 */
function chunkedBody(
  total: number,
  holdAt = Number.POSITIVE_INFINITY,
): { stream: ReadableStream<Uint8Array>; held: Promise<void>; release: () => void } {
  let sent = 0;
  let reached = () => {};
  const held = new Promise<void>((resolve) => (reached = resolve));
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const head = new TextEncoder().encode('{"messages": [');
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(head);
      sent = head.byteLength;
    },
    async pull(controller) {
      if (sent >= holdAt) {
        reached();
        await released;
      }
      if (sent >= total) return controller.close();
      const n = Math.min(CHUNK.byteLength, total - sent);
      controller.enqueue(CHUNK.slice(0, n));
      sent += n;
    },
  });
  return { stream, held, release };
}

async function send(request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const healthz = () => send(new Request("https://service.test/healthz")).then((r) => r.status);

describe("a chunked body over the limit is a 413, and the service keeps answering", () => {
  it.each([
    ["/v1/context/evict", 70, "64 MiB"],
    ["/v1/vision_analyze", 40, "34 MiB"],
  ] as const)(
    "%s: %i MiB chunked is a 413 naming %s; two concurrent /healthz answer meanwhile",
    async (path, mib, limit) => {
      const body = chunkedBody(mib * MiB, 8 * MiB);
      const request = new Request(`https://service.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: body.stream,
        duplex: "half",
      } as RequestInit);
      expect(request.headers.get("content-length")).toBeNull();
      const answer = send(request);
      // While the upload is still arriving (held after 8 MiB), the isolate serves other requests.
      await body.held;
      expect(await Promise.all([healthz(), healthz()])).toEqual([200, 200]);
      body.release();
      const response = await answer;
      expect(response.status).toBe(413);
      const error = expectErrorShape(await response.json());
      expect(error.code).toBe("payload_too_large");
      expect(error.message).toContain(`larger than ${limit}`);
      expect(await Promise.all([healthz(), healthz()])).toEqual([200, 200]);
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
      const response = await send(request);
      expect(response.status).toBe(413);
      const answer = (await response.json()) as any;
      if (path.startsWith("/anthropic"))
        expect(answer).toMatchObject({ type: "error", error: { type: "request_too_large" } });
      else expect(answer.error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" });
      expect(answer.error.message).toContain("larger than 64 MiB");
      expect(await Promise.all([healthz(), healthz()])).toEqual([200, 200]);
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
