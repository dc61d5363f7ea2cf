/**
 * The provider proxy as an operator can expose it (docs/proxy.md, "What reaches the provider" and
 * "Credentials"), through the real Workers entry forwarding to the LLM emulator: request headers
 * by allow-list and never the service's token, the path kept under the base path, near misses of
 * a conversation path counted or refused, the operator's key and its masked forms taken out of
 * every answer, only the provider's methods, and under the operator's key only the paths it pays for.
 */
import { describe, expect, it } from "vitest";
import { call, EMULATOR, llmCalls, postJson, sha256, uniqueToken, withLedger } from "./helpers";

const MODEL = "claude-sonnet-4-5";
const OPERATOR = {
  ANTHROPIC_API_KEY: "sk-ant-api03-operator0Secret0Key0For0Tests0Only-Wq9Z",
  OPENAI_API_KEY: "sk-proj-operator0Secret0Key0For0Tests0Only0Xy7K",
  API_TOKENS: "svc-token-1",
};
const ANTHROPIC_KEY = OPERATOR.ANTHROPIC_API_KEY;

const post = postJson;

const anthropicBody = (text: string, extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  max_tokens: 64,
  messages: [{ role: "user", content: text }],
  ...extra,
});

/** Every `[leak:FORM]` the emulator answers with, and the text of that form as it echoes it. */
const LEAKS = ["plain", "escaped", "ellipsis", "stars", "dots", "x"] as const;

/** The key's tell-tale parts: its middle, and its last 4 after any mask. */
function expectNoKey(text: string, key: string) {
  expect(text).not.toContain(key.slice(10, -6));
  expect(text).not.toMatch(new RegExp(`(?:\\*|x|\\.|…|\\\\u2026)${key.slice(-4)}`));
  expect(text.toLowerCase()).not.toContain("\\u0073\\u006b"); // "sk", escaped
}

describe("request headers go upstream by allow-list", () => {
  it("forwards what the SDKs send and drops anything else, a header Connection names included", async () => {
    const tag = uniqueToken();
    const response = await post(`/anthropic/v1/messages`, anthropicBody(tag), {
      "x-api-key": "sk-ant-caller-1",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "prompt-caching-2024-07-31",
      "x-stainless-os": "Linux",
      "x-stainless-retry-count": "0",
      "user-agent": "Anthropic/JS 0.60.0",
      "idempotency-key": `stainless-retry-${tag}`,
      accept: "application/json",
      connection: "keep-alive, X-Internal-Hop",
      "x-internal-hop": "this hop only",
      "x-internal-user": "alice",
      "x-amzn-trace-id": "Root=1-abc",
      "cf-aig-metadata": '{"team":"a"}',
    });
    expect(response.status).toBe(200);
    const [seen] = await llmCalls(tag);
    for (const name of [
      "anthropic-version",
      "anthropic-beta",
      "x-stainless-os",
      "x-stainless-retry-count",
      "user-agent",
      "idempotency-key",
      "accept",
    ])
      expect(seen.headers, name).toContain(name);
    for (const name of ["x-internal-hop", "x-internal-user", "x-amzn-trace-id", "cf-aig-metadata"])
      expect(seen.headers, name).not.toContain(name);
  });

  it("forwards the names proxy.forward_headers adds (an exact name, a family), and refuses a key header there", async () => {
    const tag = uniqueToken();
    const vars = { PROXY_FORWARD_HEADERS: "x-internal-user, cf-aig-*" };
    const response = await post(
      `/anthropic/v1/messages`,
      anthropicBody(tag),
      {
        "x-api-key": "sk-ant-caller-1",
        "x-internal-user": "alice",
        "cf-aig-metadata": '{"team":"a"}',
        "cf-aig-cache-ttl": "0",
        "x-internal-hop": "not listed",
      },
      vars,
    );
    expect(response.status).toBe(200);
    const [seen] = await llmCalls(tag);
    for (const name of ["x-internal-user", "cf-aig-metadata", "cf-aig-cache-ttl"]) expect(seen.headers).toContain(name);
    expect(seen.headers).not.toContain("x-internal-hop");
    const refused = await post(
      `/anthropic/v1/messages`,
      anthropicBody(tag),
      { "x-api-key": "k" },
      {
        PROXY_FORWARD_HEADERS: "Authorization",
      },
    );
    expect(refused.status).toBe(500);
    expect(await refused.text()).toContain("proxy.forward_headers");
  });

  it("caller's key: neither X-Service-Token nor a bearer service token beside x-api-key goes upstream", async () => {
    const tag = uniqueToken();
    const response = await post(
      `/anthropic/v1/messages`,
      anthropicBody(tag),
      { "x-api-key": "sk-ant-caller-1", authorization: "Bearer svc-token-1", "x-service-token": "svc-token-1" },
      { API_TOKENS: "svc-token-1" },
    );
    expect(response.status).toBe(200);
    const [seen] = await llmCalls(tag);
    expect(seen.key_sha256).toBe(await sha256("sk-ant-caller-1"));
    expect(seen.headers).not.toContain("authorization");
    expect(seen.headers).not.toContain("x-service-token");
    // A service token in the only key slot is not a provider key: refused here, never sent.
    const other = uniqueToken();
    const onlyToken = await post(
      `/openai/v1/chat/completions`,
      { model: "gpt-4o", messages: [{ role: "user", content: other }] },
      { authorization: "Bearer svc-token-1", "x-service-token": "svc-token-1" },
      { API_TOKENS: "svc-token-1" },
    );
    expect(onlyToken.status).toBe(401);
    expect(((await onlyToken.json()) as any).error.message).toContain("No openai API key was sent");
    expect(await llmCalls(other)).toHaveLength(0);
  });

  it("operator's key: the caller's service token goes nowhere but the check, in any header", async () => {
    const tag = uniqueToken();
    const response = await post(
      `/anthropic/v1/messages`,
      anthropicBody(tag),
      { "x-api-key": "svc-token-1", authorization: "Bearer svc-token-1", "x-internal-user": "svc-token-1" },
      { ...OPERATOR, PROXY_FORWARD_HEADERS: "x-internal-user" },
    );
    expect(response.status).toBe(200);
    const [seen] = await llmCalls(tag);
    expect(seen.key_sha256).toBe(await sha256(ANTHROPIC_KEY));
    expect(seen.headers).not.toContain("authorization");
    expect(seen.headers).not.toContain("x-internal-user");
  });
});

describe("the path stays under the base path", () => {
  const ESCAPES = [
    "/v1/..%2f..%2fopenai/v1/echo",
    "/v1/..%2F..%2Fopenai/v1/echo",
    // `..` and `%2e%2e` the URL parser resolves before any route sees them; encoded once more, a
    // gateway that decodes would resolve them.
    "/v1/%252e%252e/%252e%252e/openai/v1/echo",
    "/v1/.%252E/.%252e/openai/v1/echo",
    "/v1/..%5c..%5copenai/v1/echo",
    "/v1/..%5C..%5Copenai/v1/echo",
    "/v1/..%252f..%252fopenai/v1/echo",
    "/v1/echo/%2F%2Fevil.example.com",
    "//v1/echo",
  ];

  it.each(ESCAPES)("refuses %s with a 400 in Anthropic's shape, sending nothing", async (path) => {
    const tag = uniqueToken();
    const response = await call(`/anthropic${path}/${tag}`, { headers: { "x-api-key": "sk-ant-caller-1" } });
    const body = (await response.json()) as any;
    expect(response.status).toBe(400);
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain("providers.anthropic_base_url");
    expect(await llmCalls(tag)).toHaveLength(0);
  });

  it("refuses the same in OpenAI's shape, with the operator's key too", async () => {
    const tag = uniqueToken();
    const response = await call(`/openai/v1/..%2f..%2fanthropic/v1/models/${tag}`, {
      headers: { authorization: "Bearer svc-token-1" },
      vars: OPERATOR,
    });
    const body = (await response.json()) as any;
    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: null, code: "invalid_request" });
    expect(await llmCalls(tag)).toHaveLength(0);
  });

  it("keeps a gateway base path (an account's prefix) in front of every forwarded path", async () => {
    const tag = uniqueToken();
    const vars = { PROVIDERS_ANTHROPIC_BASE_URL: `${EMULATOR}/llm/anthropic/v1/echo/acct-${tag}` };
    const ok = await call(`/anthropic/models/${tag}`, { headers: { "x-api-key": "sk-ant-caller-1" }, vars });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).path).toBe(`/v1/echo/acct-${tag}/models/${tag}`);
    const out = await call(`/anthropic/..%2F..%2Fother-acct/${tag}`, {
      headers: { "x-api-key": "sk-ant-caller-1" },
      vars,
    });
    expect(out.status).toBe(400);
    expect((await llmCalls(tag)).map((seen) => seen.path)).toEqual([`/v1/echo/acct-${tag}/models/${tag}`]);
  });
});

describe("a near miss of a conversation path", () => {
  /** `body` sent through the app with a ledger that keeps what it is handed: the requests it counted. */
  const counted = async (path: string, body: unknown, headers: Record<string, string>) => {
    const ledger = withLedger();
    const { response } = await ledger.send(path, body, headers);
    return { response, requests: (await ledger.totals()).requests ?? 0 };
  };

  it.each([
    ["/anthropic/v1/messages/", "/v1/messages", { "x-api-key": "sk-ant-caller-1" }],
    ["/openai/v1/chat/completions/", "/v1/chat/completions", { authorization: "Bearer sk-openai-caller-9" }],
    ["/openai/v1/responses/", "/v1/responses", { authorization: "Bearer sk-openai-caller-9" }],
  ] as const)("%s is %s: transformed, counted, and sent on its canonical path", async (path, canonical, headers) => {
    const tag = uniqueToken();
    const body = path.includes("responses")
      ? { model: "gpt-4o", input: [{ role: "user", content: tag }] }
      : path.includes("openai")
        ? { model: "gpt-4o", messages: [{ role: "user", content: tag }] }
        : anthropicBody(tag);
    const { response, requests } = await counted(path, body, headers);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-session")).toMatch(/^[0-9a-f]{32}$/); // transformed
    expect(requests).toBe(1);
    const [seen] = await llmCalls(tag);
    expect(seen.path).toBe(canonical);
  });

  it.each([
    "/anthropic//v1/messages",
    "/anthropic/v1//messages",
    "/anthropic/v1/messages//",
    "/openai//v1/chat/completions",
    "/openai//v1/responses",
    "/anthropic/V1/Messages",
  ])("%s is refused, nothing sent or counted", async (path) => {
    const tag = uniqueToken();
    const headers: Record<string, string> = path.startsWith("/openai")
      ? { authorization: "Bearer sk-openai-caller-9" }
      : { "x-api-key": "sk-ant-caller-1" };
    const { response, requests } = await counted(path, { ...anthropicBody(tag), input: tag }, headers);
    expect(response.status).toBe(400);
    expect(requests).toBe(0);
    expect(await llmCalls(tag)).toHaveLength(0);
  });
});

describe("methods", () => {
  it.each(["PUT", "PATCH", "HEAD"])(
    "%s is a 405 in the provider's shape naming the methods, sending nothing",
    async (method) => {
      for (const [prefix, headers] of [
        ["/anthropic", { "x-api-key": "sk-ant-caller-1" }],
        ["/openai", { authorization: "Bearer sk-openai-caller-9" }],
      ] as const) {
        const tag = uniqueToken();
        const response = await call(`${prefix}/v1/echo/${tag}`, {
          method,
          headers,
          ...(method === "HEAD" ? {} : { raw: "{}" }),
        });
        expect(response.status).toBe(405);
        expect(response.headers.get("allow")).toBe("GET, POST, DELETE, OPTIONS");
        if (method !== "HEAD") {
          const body = (await response.json()) as any;
          expect(prefix === "/anthropic" ? body.error.type : body.error.code).toBe(
            prefix === "/anthropic" ? "invalid_request_error" : "method_not_allowed",
          );
        }
        expect(await llmCalls(tag)).toHaveLength(0);
      }
    },
  );
});

describe("operator's key: only the paths it pays for", () => {
  const svc = { anthropic: { "x-api-key": "svc-token-1" }, openai: { authorization: "Bearer svc-token-1" } };

  it("forwards the conversation routes, count_tokens and the model list", async () => {
    const tag = uniqueToken();
    expect((await post("/anthropic/v1/messages", anthropicBody(tag), svc.anthropic, OPERATOR)).status).toBe(200);
    expect(
      (await post("/anthropic/v1/messages/count_tokens", anthropicBody(tag), svc.anthropic, OPERATOR)).status,
    ).toBe(200);
    const chat = { model: "gpt-4o", messages: [{ role: "user", content: tag }] };
    expect((await post("/openai/v1/chat/completions", chat, svc.openai, OPERATOR)).status).toBe(200);
    const models = await call(`/openai/v1/models?${tag}`, { headers: svc.openai, vars: OPERATOR });
    expect(models.status).toBe(200);
    expect(await llmCalls(tag)).toHaveLength(4);
  });

  it.each([
    ["POST", "/openai/v1/files"],
    ["GET", "/openai/v1/files"],
    ["POST", "/anthropic/v1/messages/batches"],
    ["DELETE", "/openai/v1/models/ft:gpt-4o:acme:custom"],
    ["GET", "/anthropic/v1/echo"],
    ["GET", "/anthropic/v1/messages"],
  ])("refuses %s %s with a 403 naming proxy.allowed_paths, sending nothing", async (method, path) => {
    const tag = uniqueToken();
    const anthropic = path.startsWith("/anthropic");
    const response = await call(`${path}?${tag}`, {
      method,
      headers: anthropic ? svc.anthropic : svc.openai,
      vars: OPERATOR,
      ...(method === "POST" ? { raw: "{}" } : {}),
    });
    const body = (await response.json()) as any;
    expect(response.status).toBe(403);
    expect(anthropic ? body.error.type : body.error.type).toBe(
      anthropic ? "permission_error" : "invalid_request_error",
    );
    expect(body.error.message).toContain("proxy.allowed_paths");
    expect(await llmCalls(tag)).toHaveLength(0);
  });

  it("forwards a path below one proxy.allowed_paths lists, and caller's-key mode forwards every path", async () => {
    const tag = uniqueToken();
    const vars = { ...OPERATOR, PROXY_ALLOWED_PATHS: "/v1/files, /v1/echo" };
    const upload = await call(`/openai/v1/files?${tag}`, {
      method: "POST",
      raw: "x".repeat(100),
      headers: svc.openai,
      vars,
    });
    expect(upload.status).toBe(200);
    expect(((await upload.json()) as any).bytes).toBe(100);
    const echo = await call(`/openai/v1/echo/${tag}`, { method: "DELETE", headers: svc.openai, vars });
    expect(echo.status).toBe(200);
    // A prefix is a whole segment: /v1/filesystem is not below /v1/files.
    const beside = await call(`/openai/v1/filesystem/${tag}`, { headers: svc.openai, vars });
    expect(beside.status).toBe(403);
    const own = await call(`/openai/v1/echo/${tag}`, { method: "DELETE", headers: { authorization: "Bearer sk-own" } });
    expect(own.status).toBe(200);
    const seen = await llmCalls(tag);
    expect(seen.map((c) => `${c.method} ${c.path.split("?")[0]}`)).toEqual([
      "POST /v1/files",
      `DELETE /v1/echo/${tag}`,
      `DELETE /v1/echo/${tag}`,
    ]);
    expect(seen[2].key_sha256).toBe(await sha256("sk-own"));
  });
});

describe("operator's key: it never comes back", () => {
  const ask = (form: string, options: { stream?: boolean; status?: number; openai?: boolean; extra?: string } = {}) => {
    const marker = `[leak:${form}${options.status ? `:${options.status}` : ""}]${options.extra ?? ""} ${uniqueToken()}`;
    return options.openai
      ? post(
          "/openai/v1/chat/completions",
          { model: "gpt-4o", stream: options.stream === true, messages: [{ role: "user", content: marker }] },
          { authorization: "Bearer svc-token-1" },
          OPERATOR,
        )
      : post(
          "/anthropic/v1/messages",
          anthropicBody(marker, { stream: options.stream === true }),
          { "x-api-key": "svc-token-1" },
          OPERATOR,
        );
  };

  it.each(LEAKS)("takes the key out of a 200 answer's header and body: %s", async (form) => {
    const response = await ask(form);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("your key: [redacted]");
    expectNoKey(text, ANTHROPIC_KEY);
    expect(response.headers.get("x-echo-key")).toBe("[redacted]");
  });

  it.each(LEAKS)("takes it out of a stream, a key cut across two chunks included: %s", async (form) => {
    const response = await ask(form, { stream: true, openai: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("your key: [redacted]");
    expect(text).toContain("last event");
    expectNoKey(text, OPERATOR.OPENAI_API_KEY);
    expect(response.headers.get("x-echo-key")).toBe("[redacted]");
  });

  it.each([
    ["ellipsis", 400],
    ["escaped", 500],
    ["dots", 302],
    ["plain", 204],
  ] as const)("takes it out of any status: %s in a %i", async (form, status) => {
    const response = await ask(form, { status });
    expect(response.status).toBe(status);
    const text = await response.text();
    expectNoKey(text, ANTHROPIC_KEY);
    expect(response.headers.get("x-echo-key")).toBe("[redacted]");
  });

  it("relays a stream's first event while the provider is still sending (nothing held for the scrubbing)", async () => {
    const response = await ask("plain", { stream: true, extra: " [stall]" });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let first = "";
    while (!first.includes("\n\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      first += new TextDecoder().decode(value);
    }
    expect(first).toContain("first event");
    await reader.cancel();
  });
});
