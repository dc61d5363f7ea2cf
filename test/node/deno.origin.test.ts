/**
 * The anonymous origin gate for requests without `Origin` on Deno, over real HTTP (issue 42):
 * `Sec-Fetch-Site: cross-site` or `same-site` is a 403 (api.md shape on `/v1/*`, the provider's on
 * the proxy) and the provider is never called with the operator's key; no header, `none` and
 * `same-origin` (the service reached by its address) pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DenoOnEmulator, type DenoService, startDenoOnEmulator } from "../support/deno-service";

let emulator: DenoOnEmulator["emulator"];
let deno: DenoService;
let stack: DenoOnEmulator;

beforeAll(async () => {
  stack = await startDenoOnEmulator({ SECURITY_ALLOW_ANONYMOUS: "true", ANTHROPIC_API_KEY: "sk-ant-operator-7" });
  ({ emulator, deno } = stack);
}, 90_000);

afterAll(() => stack?.stop());

const llmCalls = async (tag: string): Promise<number> =>
  ((await (await fetch(`${emulator.url}/llm/__calls?contains=${tag}`)).json()) as { count: number }).count;

const message = (tag: string, site: string | null) =>
  fetch(`${deno.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(site === null ? {} : { "sec-fetch-site": site }) },
    body: JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: `hi ${tag}` }],
    }),
  });

describe("on Deno, without Origin, while anonymous calls are taken", () => {
  it.each(["cross-site", "same-site"])(
    "Sec-Fetch-Site: %s is a 403, and the provider is never called",
    async (site) => {
      const tag = `origin${Date.now().toString(36)}${site.length}`;
      const config = await fetch(`${deno.url}/v1/config`, { headers: { "sec-fetch-site": site } });
      expect(config.status).toBe(403);
      expect(await config.json()).toMatchObject({ success: false, error: { code: "forbidden" } });
      const refused = await message(tag, site);
      expect(refused.status).toBe(403);
      const body = (await refused.json()) as any;
      expect(body).toMatchObject({ type: "error", error: { type: "permission_error" } });
      expect(body.error.message).toContain(`Sec-Fetch-Site: ${site}`);
      const models = await fetch(`${deno.url}/anthropic/v1/models`, { headers: { "sec-fetch-site": site } });
      await models.text();
      expect(models.status).toBe(403);
      expect(await llmCalls(tag)).toBe(0);
    },
  );

  it.each([null, "none", "same-origin"])("Sec-Fetch-Site %s passes", async (site) => {
    const tag = `origin${Date.now().toString(36)}${String(site).length}ok`;
    const headers: Record<string, string> = site === null ? {} : { "sec-fetch-site": site };
    expect((await fetch(`${deno.url}/v1/config`, { headers })).status).toBe(200);
    const answer = await message(tag, site);
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(await llmCalls(tag)).toBe(1);
  });
});
