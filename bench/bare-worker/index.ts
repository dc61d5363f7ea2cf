/**
 * Bench baseline: a bare Worker that answers every request with the JSON in its PAYLOAD var or,
 * with UPSTREAM set, forwards each POST unchanged to UPSTREAM plus its path (the runtime's own
 * floor for a pass-through, next to the provider proxy's figures).
 */
export default {
  fetch(request: Request, env: { PAYLOAD: string; UPSTREAM?: string }): Response | Promise<Response> {
    if (env.UPSTREAM && request.method === "POST") {
      const url = new URL(request.url);
      return fetch(`${env.UPSTREAM}${url.pathname}${url.search}`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
    }
    return new Response(env.PAYLOAD, {
      headers: { "content-type": "application/json; charset=utf-8", "x-cache": "HIT" },
    });
  },
};
