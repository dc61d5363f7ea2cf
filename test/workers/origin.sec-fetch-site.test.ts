/**
 * The anonymous origin gate for requests without `Origin` (issue 42), inside workerd: only a
 * `Sec-Fetch-Site` of `same-origin` or `none`, or none at all (curl, SDKs), passes; `cross-site` and
 * `same-site` (an `<img src>` or a link on another site, which sends no `Origin` on a GET) are a 403
 * in the api.md shape on `/v1/*` and in the provider's shape on the proxy, and the provider is never
 * called with the operator's key. With a token required, the gate stands aside (auth decides).
 */
import { describe, expect, it } from "vitest";
import { call, EMULATOR, expectErrorShape, uniqueToken } from "./helpers";

const OPERATOR = { ANTHROPIC_API_KEY: "sk-ant-operator-7", OPENAI_API_KEY: "sk-operator-7" };

async function llmCalls(tag: string): Promise<number> {
  const response = await fetch(`${EMULATOR}/llm/__calls?contains=${encodeURIComponent(tag)}`);
  return ((await response.json()) as { count: number }).count;
}

const anthropic = (tag: string, site: string | null) =>
  call("/anthropic/v1/messages", {
    body: { model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: `hi ${tag}` }] },
    headers: site === null ? {} : { "sec-fetch-site": site },
    vars: OPERATOR,
    at: "http://127.0.0.1:8787",
  });

const openai = (tag: string, site: string | null) =>
  call("/openai/v1/chat/completions", {
    body: { model: "gpt-4o", messages: [{ role: "user", content: `hi ${tag}` }] },
    headers: site === null ? {} : { "sec-fetch-site": site },
    vars: OPERATOR,
    at: "http://127.0.0.1:8787",
  });

describe("without Origin, while anonymous calls are taken", () => {
  it.each(["cross-site", "same-site", "Cross-Site"])(
    "Sec-Fetch-Site: %s is a 403 on /v1/* (api.md shape)",
    async (site) => {
      const response = await call("/v1/config", { headers: { "sec-fetch-site": site }, at: "http://127.0.0.1:8787" });
      expect(response.status).toBe(403);
      const error = expectErrorShape(await response.json());
      expect(error.code).toBe("forbidden");
      expect(error.message).toContain(`Sec-Fetch-Site: ${site.toLowerCase()}`);
      expect(error.message).toContain("without a token");
    },
  );

  it.each(["cross-site", "same-site"])(
    "Sec-Fetch-Site: %s is a 403 in each provider's shape on the proxy, and never reaches the provider",
    async (site) => {
      const tag = uniqueToken();
      const refusedA = await anthropic(tag, site);
      expect(refusedA.status).toBe(403);
      const bodyA = (await refusedA.json()) as any;
      expect(bodyA).toMatchObject({ type: "error", error: { type: "permission_error" } });
      expect(bodyA.error.message).toContain(`Sec-Fetch-Site: ${site}`);
      const refusedO = await openai(tag, site);
      expect(refusedO.status).toBe(403);
      const bodyO = (await refusedO.json()) as any;
      expect(bodyO.error.message).toContain(`Sec-Fetch-Site: ${site}`);
      expect(bodyO.error.code).toBe("forbidden");
      const models = await call("/anthropic/v1/models", {
        headers: { "sec-fetch-site": site },
        vars: OPERATOR,
        at: "http://127.0.0.1:8787",
      });
      await models.text();
      expect(models.status).toBe(403);
      expect(await llmCalls(tag)).toBe(0);
    },
  );

  it.each([
    ["no Sec-Fetch-Site (curl, an SDK)", null],
    ["Sec-Fetch-Site: none (a typed URL)", "none"],
    ["Sec-Fetch-Site: same-origin, reached by address", "same-origin"],
  ])("%s passes, on /v1/* and the proxy", async (_, site) => {
    const tag = uniqueToken();
    const headers: Record<string, string> = site === null ? {} : { "sec-fetch-site": site };
    expect((await call("/v1/config", { headers, at: "http://127.0.0.1:8787" })).status).toBe(200);
    const answer = await anthropic(tag, site);
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(await llmCalls(tag)).toBe(1);
  });

  it("with a token required, a cross-site request without Origin is judged by its token", async () => {
    const vars = { API_TOKENS: "svc-1", SECURITY_ALLOW_ANONYMOUS: "false" };
    const headers = { "sec-fetch-site": "cross-site" };
    expect((await call("/v1/config", { headers, vars })).status).toBe(401);
    expect((await call("/v1/config", { headers: { ...headers, authorization: "Bearer svc-1" }, vars })).status).toBe(
      200,
    );
  });
});
