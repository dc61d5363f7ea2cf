/**
 * How a JSON request body is read (shared/http/body.ts): a body with a declared length is taken
 * whole, without asking the request for its stream (on Deno that getter turns a body the server
 * already holds into a stream the read then drains: docs/speed.md); a body without one is still
 * read from its stream, within the limit.
 */
import { describe, expect, it } from "vitest";
import { readJsonBody } from "../../shared/http/body";
import { AppError } from "../../shared/http/errors";

const json = (text: string, headers: Record<string, string> = {}) =>
  new Request("http://127.0.0.1/v1/web_search", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: text,
  });

/** A request whose `body` getter throws: a read that asks for the stream fails. */
function withoutStream(request: Request): Request {
  Object.defineProperty(request, "body", {
    get() {
      throw new Error("the body's stream was asked for");
    },
  });
  return request;
}

/** A body sent as a stream of `chunks`, with no declared length. */
const streamed = (chunks: string[]) =>
  new Request("http://127.0.0.1/v1/web_search", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    }),
    duplex: "half",
  } as RequestInit);

describe("reading a JSON body", () => {
  it("takes a body of declared length whole, without its stream", async () => {
    const text = JSON.stringify({ query: "weather in vegas", limit: 3 });
    const request = withoutStream(json(text, { "content-length": String(text.length) }));
    expect(await readJsonBody(request)).toEqual({ query: "weather in vegas", limit: 3 });
  });

  it("refuses a declared length over the limit before reading", async () => {
    const request = withoutStream(json('{"query":"x"}', { "content-length": "2000" }));
    const refused = await readJsonBody(request, 1000).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe("payload_too_large");
  });

  it("reads a body without a declared length from its stream, and refuses it past the limit", async () => {
    expect(await readJsonBody(streamed(['{"query":', '"chunked"}']))).toEqual({ query: "chunked" });
    const refused = await readJsonBody(streamed(['{"query":"', "x".repeat(600), "x".repeat(600), '"}']), 1000).catch(
      (error: unknown) => error,
    );
    expect((refused as AppError).code).toBe("payload_too_large");
  });
});
