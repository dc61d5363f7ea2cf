/**
 * The service as `npm run dev` runs it: wrangler dev (its own bundler, real workerd, local KV and
 * Durable Objects), driven over real HTTP by an outside client pointed at the loopback emulator.
 * This catches what the vitest pool cannot: bundling differences (e.g. WASM imports) and startup.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack";

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const post = (path: string, body: unknown) =>
  fetch(`${stack.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("wrangler dev", () => {
  it("answers /healthz as workerd", async () => {
    const response = await fetch(`${stack.url}/healthz`);
    expect(await response.json()).toMatchObject({ ok: true, runtime: "workerd" });
  });

  it("pays the provider once for a repeated search", async () => {
    const token = `dev${Date.now().toString(36)}`;
    const first = await post("/v1/web_search", { query: `dev server ${token}` });
    const second = await post("/v1/web_search", { query: `dev server ${token}` });
    expect([first.headers.get("x-cache"), second.headers.get("x-cache")]).toEqual(["MISS", "HIT"]);
    expect(await stack.providerCalls("tavily", token)).toBe(1);
  });

  it("fits an image with the bundled WASM codecs", async () => {
    const response = await post("/v1/vision_analyze", {
      image: { url: "http://127.0.0.1:1/never-fetched.png" },
      session_id: "dev",
    });
    // Loopback image URLs are refused by the gate before any fetch: the route and its WASM module load.
    expect(response.status).toBe(403);
    const png = await fetch(`${stack.emulatorUrl}/pages/image.png?w=2400&h=1600`).then((r) => r.arrayBuffer());
    const fitted = await post("/v1/vision_analyze", { image: { data: Buffer.from(png).toString("base64") }, session_id: "dev" });
    const body = (await fitted.json()) as any;
    expect(fitted.status).toBe(200);
    expect([body.image.width, body.image.height]).toEqual([1568, 1045]);
    expect(body.image.bytes).toBeLessThanOrEqual(262_144);
  });
});
