/**
 * Bench Worker for bench/proxy-stream-stages.ts: forwards each POST to UPSTREAM plus its path and
 * relays the answer's body in the way the `x-relay` header names: `native` (the fetch's own
 * response, as the bare Worker does), `one` (through one JavaScript stream that pulls from the
 * upstream body, as shared/proxy/relay.ts does), `two` (through two in series, as the relay inside
 * the Workers entry's end-of-body watch did before), or `transform` (an identity TransformStream).
 */
/** A stream that pulls each chunk of `source` and passes it on unchanged. */
function pulled(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read();
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

export default {
  async fetch(request: Request, env: { UPSTREAM: string }): Promise<Response> {
    if (request.method !== "POST") return new Response("POST a provider request; x-relay: native|one|two|transform");
    const relay = request.headers.get("x-relay") ?? "native";
    const headers = new Headers(request.headers);
    headers.delete("x-relay");
    const url = new URL(request.url);
    const upstream = await fetch(`${env.UPSTREAM}${url.pathname}`, { method: "POST", headers, body: request.body });
    if (relay === "native" || !upstream.body) return upstream;
    const body =
      relay === "one"
        ? pulled(upstream.body)
        : relay === "two"
          ? pulled(pulled(upstream.body))
          : upstream.body.pipeThrough(new TransformStream());
    const out = new Headers(upstream.headers);
    out.delete("content-length");
    return new Response(body, { status: upstream.status, headers: out });
  },
};
