/** Bench baseline: a bare Worker that answers every request with the JSON in its PAYLOAD var. */
export default {
  fetch(_request: Request, env: { PAYLOAD: string }): Response {
    return new Response(env.PAYLOAD, {
      headers: { "content-type": "application/json; charset=utf-8", "x-cache": "HIT" },
    });
  },
};
