/**
 * Bench baseline: a bare Worker that answers every request with the JSON in its PAYLOAD var or,
 * with UPSTREAM set, forwards each POST unchanged to UPSTREAM plus its path (the runtime's own
 * floor for a pass-through, next to the provider proxy's figures). With FLOOR=1 it does what the
 * web_search contract asks of any Worker on top of answering: reads the request body and parses
 * it as JSON, and answers with the hit's headers (X-Cache, Age, a new X-Request-Id): the
 * runtime's own floor for a hit (bench/bare-deno does the same on Deno; docs/speed.md).
 */
export default {
  async fetch(request: Request, env: { PAYLOAD: string; UPSTREAM?: string; FLOOR?: string }): Promise<Response> {
    if (env.UPSTREAM && request.method === "POST") {
      const url = new URL(request.url);
      return fetch(`${env.UPSTREAM}${url.pathname}${url.search}`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
    }
    if (env.FLOOR !== "1" || request.method !== "POST")
      return new Response(env.PAYLOAD, {
        headers: { "content-type": "application/json; charset=utf-8", "x-cache": "HIT" },
      });
    JSON.parse(await request.text());
    return new Response(env.PAYLOAD, {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "x-cache": "HIT",
        age: "0",
        "x-request-id": crypto.randomUUID(),
      },
    });
  },
};
