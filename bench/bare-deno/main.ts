/** Bench baseline: a bare Deno.serve route that answers every request with the JSON in PAYLOAD. */
const payload = Deno.env.get("PAYLOAD") ?? "{}";
Deno.serve(
  { port: Number(Deno.env.get("PORT")), hostname: "127.0.0.1", onListen: () => {} },
  () => new Response(payload, { headers: { "content-type": "application/json; charset=utf-8", "x-cache": "HIT" } }),
);
