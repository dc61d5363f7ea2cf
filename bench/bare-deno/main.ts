/**
 * Bench baseline: a bare Deno.serve route that answers every request with the JSON in PAYLOAD.
 * With FLOOR=1 it does what the web_search contract asks of any server on top: reads the request's
 * Content-Type and body, parses the body as JSON, and answers with the hit's headers (X-Cache,
 * Age, a new X-Request-Id): the runtime's own floor for a hit (docs/speed.md).
 */
const payload = Deno.env.get("PAYLOAD") ?? "{}";
const floor = Deno.env.get("FLOOR") === "1";
Deno.serve({ port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
  if (!floor || request.method !== "POST")
    return new Response(payload, { headers: { "content-type": "application/json; charset=utf-8", "x-cache": "HIT" } });
  // The contract's one header read (Content-Type): on Deno any read of a request's headers makes
  // the server copy its whole header list when the request is done (docs/speed.md).
  if (request.headers.get("content-type") === null) return new Response(null, { status: 415 });
  JSON.parse(await request.text());
  return new Response(payload, {
    headers: {
      "content-type": "application/json; charset=utf-8",
      "x-cache": "HIT",
      age: "0",
      "x-request-id": crypto.randomUUID(),
    },
  });
});
