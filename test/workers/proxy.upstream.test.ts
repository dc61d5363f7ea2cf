/**
 * What the proxy relays of the provider's answer and what it does not do with it (docs/proxy.md):
 * a 3xx is relayed, never followed (a followed redirect would carry the caller's key to whatever
 * host it names), and `set-cookie` is not relayed. The LLM emulator's `[redirect:STATUS]` points at
 * its other listener, which records anything that reaches it.
 */
import { describe, expect, it } from "vitest";
import { call, EMULATOR, uniqueToken } from "./helpers";

const MODEL = "claude-sonnet-4-5";

const send = (route: "anthropic" | "openai", text: string) =>
  route === "anthropic"
    ? call("/anthropic/v1/messages", {
        body: { model: MODEL, max_tokens: 64, messages: [{ role: "user", content: text }] },
        headers: { "x-api-key": "sk-ant-caller-key" },
      })
    : call("/openai/v1/chat/completions", {
        body: { model: "gpt-4o", messages: [{ role: "user", content: text }] },
        headers: { authorization: "Bearer sk-openai-caller-key" },
      });

/** Requests that reached the emulator's other listener with `tag` in their URL. */
async function elsewhereCalls(tag: string): Promise<number> {
  const response = await fetch(`${EMULATOR}/__calls?provider=elsewhere&contains=${encodeURIComponent(tag)}`);
  return ((await response.json()) as { count: number }).count;
}

describe("a 3xx from the provider", () => {
  it.each([
    ["anthropic", 307],
    ["anthropic", 302],
    ["openai", 308],
    ["openai", 301],
  ] as const)("%s: a %i is relayed with its Location, and the other host sees no request", async (route, status) => {
    const tag = uniqueToken();
    const response = await send(route, `[redirect:${status}] ${tag}`);
    expect(response.status).toBe(status);
    const location = new URL(response.headers.get("location") ?? "");
    expect([location.hostname, location.pathname]).toEqual(["127.0.0.1", "/moved"]);
    expect(location.port).not.toBe(new URL(EMULATOR).port);
    await response.arrayBuffer();
    expect(await elsewhereCalls(tag)).toBe(0);
    // The other host does record what reaches it: the same Location fetched directly is counted.
    await (await fetch(location, { method: "POST", headers: { "x-api-key": "k" } })).arrayBuffer();
    expect(await elsewhereCalls(tag)).toBe(1);
  });
});

describe("set-cookie", () => {
  it("is not relayed, on a plain and on a streamed answer; the answer is", async () => {
    const tag = uniqueToken();
    const direct = await fetch(`${EMULATOR}/llm/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 8,
        messages: [{ role: "user", content: `[set-cookie] ${tag}` }],
      }),
    });
    expect(direct.headers.get("set-cookie")).toContain("__cf_bm=");
    await direct.arrayBuffer();
    for (const route of ["anthropic", "openai"] as const) {
      const response = await send(route, `[set-cookie] ${tag}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("set-cookie")).toBeNull();
      expect(((await response.json()) as { model: string }).model).toBeTruthy();
    }
    const streamed = await call("/anthropic/v1/messages", {
      body: {
        model: MODEL,
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: `[set-cookie] ${tag}` }],
      },
      headers: { "x-api-key": "sk-ant-caller-key" },
    });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    expect(streamed.headers.get("set-cookie")).toBeNull();
    expect(await streamed.text()).toContain("message_stop");
  });
});
