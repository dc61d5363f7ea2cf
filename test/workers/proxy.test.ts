/**
 * The provider proxy (/anthropic/*, /openai/*) through the real Workers entry, forwarding to the
 * LLM emulator (test/emulator/llm.ts): answers and streams relayed, both credential modes, the
 * outbound transform (fitting, retirement, breakpoints), faults and bad input in the provider's
 * error shape, and no request steering the upstream host.
 */
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../shared/app/app";
import { workersDeps } from "../../workers/deps";
import { recordingLedger } from "../support/recording-ledger";
import { encodePng, screenshotPixels, toBase64, webpFrom } from "../fixtures/images";
import { LEDGER_FAILED_NAME } from "../../shared/stats/ledger";
import {
  bothTtlsBody,
  call,
  EMULATOR,
  ledgerCountsOf,
  llmCalls,
  messageStart,
  postJson,
  screenshotCall,
  sha256,
  sseEvent,
  testEnv,
  uniqueToken,
  withLedger,
} from "./helpers";

const MODEL = "claude-sonnet-4-5";

const post = postJson;

const anthropicBody = (tag: string, extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  max_tokens: 64,
  system: `You are a test agent ${tag}.`,
  messages: [{ role: "user", content: `hello ${tag}` }],
  ...extra,
});

/** A screenshot-like PNG, as base64. */
const screenshot = async (width: number, height: number, seed: number) =>
  toBase64(await encodePng(screenshotPixels(width, height, seed), width, height, 3));

/** `body` sent to the emulated Anthropic Messages API directly, not through the proxy. */
const sendDirect = (body: unknown) =>
  fetch(`${EMULATOR}/llm/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: JSON.stringify(body),
  });

/** An Anthropic call whose one tool result carries `data` as its image. */
const oneToolImage = (tag: string, data: string) =>
  anthropicBody(tag, {
    messages: [{ role: "user", content: `start ${tag}` }, ...screenshotCall("t1", data)],
  });

/** A task, then `turns` screenshot tool calls, each answered with the same screenshot and a line of text. */
function screenshotSession(task: string, shot: string, turns = 40): any[] {
  const messages: any[] = [{ role: "user", content: task }];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `t${i}`, name: "screenshot", input: { i } }],
    });
    messages.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: `t${i}`,
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: shot } },
            { type: "text", text: `shot ${i}` },
          ],
        },
      ],
    });
  }
  return messages;
}

/**
 * Sends a 40-screenshot session under its own session id: at least one screenshot retired, each
 * retired one a placeholder at the provider, the others sent.
 */
async function sendSession(body: Record<string, unknown>, tag: string) {
  const response = await post("/anthropic/v1/messages", body, { "x-api-key": "k", "x-session-id": `s-${tag}` });
  expect(response.status).toBe(200);
  const retired = Number(response.headers.get("x-edge-retired"));
  expect(retired).toBeGreaterThan(0);
  const [seen] = await llmCalls(tag);
  expect(seen.placeholders).toBe(retired);
  expect(seen.images).toBe(40 - retired);
  return { response, retired, seen };
}

describe("the Anthropic route", () => {
  it("forwards a plain call with the caller's key and relays the answer, usage and X-Edge headers", async () => {
    const tag = uniqueToken();
    const response = await post("/anthropic/v1/messages", anthropicBody(tag), {
      "x-api-key": "sk-ant-caller-1",
      "anthropic-version": "2023-06-01",
      cookie: "a=b",
      "x-forwarded-host": "evil.example.com",
      "x-service-token": "nope",
      // Named in Connection: hop-by-hop for this one connection (RFC 9110, 7.6.1).
      connection: "keep-alive, X-Internal-Hop",
      "x-internal-hop": "this-hop-only",
    });
    expect(response.status).toBe(200);
    const body: any = await response.json();
    expect(body.type).toBe("message");
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get("x-edge-session")).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers.get("x-edge-retired")).toBe("0");
    expect(response.headers.get("x-edge-fitted")).toBe("0");
    expect(response.headers.get("request-id")).toMatch(/^req_emu/);
    const [seen] = await llmCalls(tag);
    expect(seen.key_sha256).toBe(await sha256("sk-ant-caller-1"));
    expect(seen.headers).toContain("anthropic-version");
    for (const name of ["cookie", "x-forwarded-host", "x-service-token", "x-session-id", "x-internal-hop"])
      expect(seen.headers).not.toContain(name);
    expect(response.headers.get("x-edge-bytes-saved")).toBe("0");
    // The derived session key is the caller's: another key, the same conversation, another session.
    const again = await post("/anthropic/v1/messages", anthropicBody(tag), { "x-api-key": "sk-ant-caller-1" });
    const other = await post("/anthropic/v1/messages", anthropicBody(tag), { "x-api-key": "sk-ant-caller-2" });
    expect(again.headers.get("x-edge-session")).toBe(response.headers.get("x-edge-session"));
    expect(other.headers.get("x-edge-session")).toMatch(/^[0-9a-f]{32}$/);
    expect(other.headers.get("x-edge-session")).not.toBe(response.headers.get("x-edge-session"));
  });

  it("relays a stream event by event, usage included", async () => {
    const tag = uniqueToken();
    const response = await post("/anthropic/v1/messages", anthropicBody(tag, { stream: true }), {
      "x-api-key": "sk-ant-caller-1",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const text = await response.text();
    const events = [...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe("message_start");
    expect(events.at(-1)).toBe("message_stop");
    expect(events).toContain("content_block_delta");
  });

  it("relays the provider's errors unchanged: 429 with retry-after, 529 overloaded", async () => {
    for (const [marker, status, type] of [
      ["[fail:429]", 429, "rate_limit_error"],
      ["[fail:529]", 529, "overloaded_error"],
    ] as const) {
      const tag = uniqueToken();
      const response = await post(
        "/anthropic/v1/messages",
        anthropicBody(tag, { messages: [{ role: "user", content: `${marker} ${tag}` }] }),
        { "x-api-key": "sk-ant-caller-1" },
      );
      expect(response.status).toBe(status);
      expect(response.headers.get("retry-after")).toBe("1");
      const body: any = await response.json();
      expect(body).toMatchObject({ type: "error", error: { type } });
    }
  });

  it("answers malformed, too deep and non-object JSON with a 400 in Anthropic's shape, sending nothing", async () => {
    const tag = uniqueToken();
    const deep = `{"model":"${MODEL}","messages":${"[".repeat(300)}${"]".repeat(300)},"system":"${tag}"}`;
    for (const raw of [`{"model": "${tag}"`, deep, `["${tag}"]`]) {
      const response = await post("/anthropic/v1/messages", raw, { "x-api-key": "sk-ant-caller-1" });
      expect(response.status).toBe(400);
      const body: any = await response.json();
      expect(body.type).toBe("error");
      expect(body.error.type).toBe("invalid_request_error");
      expect(typeof body.error.message).toBe("string");
    }
    expect(await llmCalls(tag)).toHaveLength(0);
  });

  it("forwards a non-JSON content type unchanged and lets the provider answer", async () => {
    const tag = uniqueToken();
    const response = await call("/anthropic/v1/messages", {
      method: "POST",
      raw: `hello ${tag}`,
      headers: { "content-type": "text/plain", "x-api-key": "sk-ant-caller-1" },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).type).toBe("error");
  });

  it("sends a request it does not change byte for byte as it came: small or large (sent again from its text), with a byte-order mark", async () => {
    const bodies = [1, 2_500].map((paragraphs) => {
      const tag = uniqueToken();
      // Spacing, a float written 1.0, an integer past 2^53 and non-ASCII text: a re-serialised
      // body would differ in each.
      const filler = Array.from({ length: paragraphs }, (_, i) => `paragraph ${i} über ✓ ${"word ".repeat(160)}`);
      return {
        tag,
        text: `{\n  "model": "${MODEL}",  "max_tokens": 64, "temperature": 1.0, "metadata": {"user_id": "u"}, "seed_like": 90071992547409931,\n  "system": "You are a test agent ${tag}.",\n  "messages": [ {"role": "user", "content": ${JSON.stringify(filler.join("\n"))}} ]\n}\n`,
      };
    });
    const withBom = { tag: bodies[1]!.tag.replace(/^/, "bom"), text: "" };
    withBom.text = `\uFEFF${bodies[1]!.text.replaceAll(bodies[1]!.tag, withBom.tag)}`;
    for (const { tag, text } of [...bodies, withBom]) {
      const response = await post("/anthropic/v1/messages", text, { "x-api-key": "sk-ant-caller-1" });
      // The emulator, like Node's JSON.parse, refuses a byte-order mark: that 400 is its own.
      expect(response.status, tag).toBe(tag === withBom.tag ? 400 : 200);
      expect(response.headers.get("x-edge-bytes-saved")).toBe("0");
      // Found by the hash of the bytes sent: the emulator reads no tag from a body it refused.
      const hash = await sha256(text);
      const upstream = (await llmCalls("")).filter((c) => c.body_sha256 === hash);
      expect(
        upstream.map((c) => c.body_bytes),
        tag,
      ).toEqual([new TextEncoder().encode(text).byteLength]);
    }
    // The large one is past the size (1 MiB) from which the proxy drops the bytes and encodes the text again.
    expect(new TextEncoder().encode(bodies[1]!.text).byteLength).toBeGreaterThan(1024 * 1024);
  });

  it("passes an unknown model to the provider, whose 404 comes back as it is", async () => {
    const tag = uniqueToken();
    const response = await post("/anthropic/v1/messages", anthropicBody(tag, { model: "claude-nonexistent-9" }), {
      "x-api-key": "sk-ant-caller-1",
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.type).toBe("not_found_error");
    expect(await llmCalls(tag)).toHaveLength(1);
  });

  it("forwards other paths unchanged (method, query) and never lets a path or a header pick the host", async () => {
    const models = await call("/anthropic/v1/models?limit=2", { headers: { "x-api-key": "sk-ant-caller-1" } });
    expect(models.status).toBe(200);
    expect(((await models.json()) as any).query).toBe("?limit=2");
    const tag = uniqueToken();
    for (const path of [
      `/anthropic//evil.example.com/v1/echo/${tag}`,
      `/anthropic/v1/echo/@evil.example.com/${tag}`,
      `/anthropic/v1/echo/%2F%2Fevil.example.com/${tag}`,
    ]) {
      const response = await call(path, {
        method: "POST",
        raw: `{"x":"${tag}"}`,
        headers: {
          "content-type": "application/json",
          "x-api-key": "sk-ant-caller-1",
          host: "evil.example.com",
          "x-forwarded-host": "evil.example.com",
        },
      });
      // Either the emulator (the configured upstream) answered, or the path was refused: never another host.
      expect([200, 400, 404]).toContain(response.status);
      const text = await response.text();
      expect(text).not.toContain("no network in tests");
    }
    const echoed = await llmCalls(tag);
    expect(echoed.length).toBeGreaterThan(0);
    for (const seen of echoed) expect(seen.headers).not.toContain("x-forwarded-host");
  });

  it("reads a gzip conversation and sends it on inflated; any other path's encoded body goes as it came", async () => {
    const tag = uniqueToken();
    const gzip = async (text: string) =>
      new Uint8Array(
        await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer(),
      );
    const response = await call("/anthropic/v1/messages", {
      method: "POST",
      raw: await gzip(JSON.stringify(anthropicBody(tag))),
      headers: { "content-type": "application/json", "content-encoding": "gzip", "x-api-key": "sk-ant-caller-1" },
    });
    expect(response.status).toBe(200);
    expect(JSON.stringify(await response.json())).toContain("Emulated answer");
    const [seen] = await llmCalls(tag);
    expect(seen.model).toBe(MODEL);
    expect(seen.headers).not.toContain("content-encoding");
    const other = uniqueToken();
    const packed = await gzip(`{"x":"${other}"}`);
    const echoed = await call(`/anthropic/v1/echo/${other}`, {
      method: "POST",
      raw: packed,
      headers: { "content-type": "application/json", "content-encoding": "gzip", "x-api-key": "sk-ant-caller-1" },
    });
    expect(echoed.status).toBe(200);
    const [passed] = await llmCalls(other);
    expect(passed.headers).toContain("content-encoding");
    expect(passed.body_bytes).toBe(packed.byteLength);
  });

  it("streams a path it does not transform through unread, past the 64 MiB a conversation may have: a 70 MiB file upload", async () => {
    const tag = uniqueToken();
    const size = 70 * 1024 * 1024;
    const response = await call(`/openai/v1/files-${tag}`, {
      method: "POST",
      raw: new Uint8Array(size).fill(97),
      headers: { authorization: "Bearer sk-caller", "content-type": "application/octet-stream" },
    });
    await response.text();
    expect(response.status).toBe(404); // the emulator has no such path: the provider answered, not our 413
    const [seen] = await llmCalls(tag);
    expect(seen.body_bytes).toBe(size);
  }, 60_000);

  /** A browser's preflight for a Messages call from `origin`. */
  const preflightFrom = (origin: string, path: string, vars?: Record<string, unknown>) =>
    call(path, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "anthropic-version,content-type,x-api-key",
        "x-custom": "not forwarded",
      },
      ...(vars ? { vars } : {}),
    });

  it("forwards a browser's CORS preflight with no key and nothing but its CORS headers, so the provider answers it", async () => {
    const page = "http://localhost:5173";
    for (const vars of [
      { SECURITY_ALLOWED_ORIGINS: page }, // anonymous: an allowed page
      { API_TOKENS: "svc-1", SECURITY_ALLOW_ANONYMOUS: "false", ANTHROPIC_API_KEY: "sk-ant-operator-7" }, // tokens: any page may ask
    ]) {
      const tag = uniqueToken();
      const response = await preflightFrom(page, `/anthropic/v1/echo/${tag}`, vars);
      const text = await response.text();
      expect(response.status, text.slice(0, 200)).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(page);
      const [seen] = await llmCalls(tag);
      expect(seen.method).toBe("OPTIONS");
      expect(seen.key_sha256).toBeNull();
      expect(seen.headers).not.toContain("x-custom");
    }
  });

  it("takes no page's call while it takes calls without a token: a foreign page cannot spend the operator's key", async () => {
    const tag = uniqueToken();
    const vars = { ANTHROPIC_API_KEY: "sk-ant-operator-7" };
    const preflight = await preflightFrom("https://evil.example", "/anthropic/v1/messages", vars);
    expect(preflight.status).toBe(403);
    const response = await post(
      "/anthropic/v1/messages",
      anthropicBody(tag),
      { origin: "https://evil.example", "anthropic-dangerous-direct-browser-access": "true" },
      vars,
    );
    expect(response.status).toBe(403);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ type: "error", error: { type: "permission_error" } });
    expect(body.error.message).toContain("security.allowed_origins");
    expect(await llmCalls(tag)).toHaveLength(0);
  });

  it("takes no same-origin GET from a DNS-rebinding page (no Origin, but Sec-Fetch-Site) while anonymous; a CLI by that name passes", async () => {
    const rebound = "http://rebind.attacker.example:8787";
    const vars = { ANTHROPIC_API_KEY: "sk-ant-operator-7" };
    const tag = uniqueToken();
    const page = await call(`/anthropic/v1/models?${tag}`, {
      at: rebound,
      vars,
      headers: { "sec-fetch-site": "same-origin" },
    });
    await page.text();
    expect(page.status).toBe(403);
    expect(await llmCalls(tag)).toHaveLength(0);
    const config = await call("/v1/config", { at: rebound, headers: { "sec-fetch-site": "same-origin" } });
    expect(config.status).toBe(403);
    // A program reaching the service by a name (a container's, say) sends no Sec-Fetch-Site.
    const cli = await call("/v1/config", { at: rebound });
    expect(cli.status).toBe(200);
    // A typed URL or a bookmark (Sec-Fetch-Site: none) is the user's own navigation.
    expect((await call("/v1/config", { at: rebound, headers: { "sec-fetch-site": "none" } })).status).toBe(200);
  });

  it("checks the key of an OPTIONS that is not a preflight, and never forwards its body unchecked", async () => {
    const tag = uniqueToken();
    const vars = { API_TOKENS: "svc-1", SECURITY_ALLOW_ANONYMOUS: "false", ANTHROPIC_API_KEY: "sk-ant-operator-7" };
    const response = await call(`/anthropic/v1/anything/${tag}?q=1`, {
      method: "OPTIONS",
      raw: "a".repeat(1024 * 1024),
      headers: { "content-type": "text/plain" },
      vars,
    });
    await response.text();
    expect(response.status).toBe(401);
    expect(await llmCalls(tag)).toHaveLength(0);
  });

  it("is a 404 when proxy.enabled is false", async () => {
    const response = await post(
      "/anthropic/v1/messages",
      anthropicBody(uniqueToken()),
      { "x-api-key": "k" },
      { PROXY_ENABLED: "false" },
    );
    expect(response.status).toBe(404);
  });

  it("answers a provider that never answers with a 504 after proxy.timeout_seconds", async () => {
    const tag = uniqueToken();
    const started = Date.now();
    const model = `${MODEL}-${tag}`;
    const failedBefore = (await ledgerCountsOf(LEDGER_FAILED_NAME)) ?? {};
    const response = await post(
      "/anthropic/v1/messages",
      anthropicBody(tag, { model, messages: [{ role: "user", content: `[hang] ${tag}` }] }),
      { "x-api-key": "k" },
      { PROXY_TIMEOUT_SECONDS: "10" },
    );
    expect(response.status).toBe(504);
    expect(((await response.json()) as any).error.type).toBe("timeout_error");
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    // Counted as a request that failed (under "(failed)": the provider never checked its model
    // name): errors are a part of requests, never more.
    await vi.waitFor(
      async () => {
        const failed = (await ledgerCountsOf(LEDGER_FAILED_NAME)) ?? {};
        expect((failed.requests ?? 0) - (failedBefore.requests ?? 0)).toBe(1);
        expect((failed.errors ?? 0) - (failedBefore.errors ?? 0)).toBe(1);
      },
      { timeout: 3_000, interval: 100 },
    );
    expect(await ledgerCountsOf(model)).toBeUndefined();
  }, 30_000);

  it("answers a provider it cannot reach with a 502 in its shape naming the setting that says where (a mistyped base URL is not an outage)", async () => {
    // The connection refused, as the runtime's fetch reports it.
    const app = createApp(workersDeps(testEnv, { fetch: () => Promise.reject(new TypeError("fetch failed")) }));
    const response = await app.fetch(
      new Request("https://service.test/anthropic/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "k" },
        body: JSON.stringify(anthropicBody(uniqueToken())),
      }),
      testEnv,
    );
    const body = (await response.json()) as any;
    expect(response.status, JSON.stringify(body)).toBe(502);
    expect(body.type).toBe("error");
    expect(body.error.message).toBe(
      "The anthropic API could not be reached at providers.anthropic_base_url; check that setting, or try again.",
    );
  });
});

describe("credentials", () => {
  it("operator's key: a service token in the SDK's key slot, the operator's key upstream, never echoed", async () => {
    const vars = { ANTHROPIC_API_KEY: "sk-ant-operator-secret-77", API_TOKENS: "svc-token-1,svc-token-2" };
    const tag = uniqueToken();
    const ok = await post("/anthropic/v1/messages", anthropicBody(tag), { "x-api-key": "svc-token-2" }, vars);
    expect(ok.status).toBe(200);
    const [seen] = await llmCalls(tag);
    expect(seen.key_sha256).toBe(await sha256("sk-ant-operator-secret-77"));

    const refused = await post(
      "/anthropic/v1/messages",
      anthropicBody(tag),
      { authorization: "Bearer not-a-token" },
      vars,
    );
    expect(refused.status).toBe(401);
    const text = await refused.text();
    expect(JSON.parse(text)).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    expect(text).not.toContain("sk-ant-operator-secret-77");
    expect(await llmCalls(tag)).toHaveLength(1);
  });

  it("operator's key: a provider's error that echoes the key refused (OpenAI's 401) reaches the caller without it", async () => {
    const operatorKey = "sk-proj-operator0secret0key0abcd";
    const vars = { OPENAI_API_KEY: operatorKey, API_TOKENS: "svc-token-1" };
    const headers = { authorization: "Bearer svc-token-1" };
    const tag = uniqueToken();
    const body = { model: "gpt-4o", messages: [{ role: "user", content: `[fail:401] ${tag}` }] };
    const refused = await post("/openai/v1/chat/completions", body, headers, vars);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-request-id")).toMatch(/^req_emu/);
    const text = await refused.text();
    const error = JSON.parse(text).error;
    expect(error.message).toBe(
      "Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.",
    );
    expect(error.type).toBe("invalid_request_error");
    for (const part of [operatorKey, operatorKey.slice(0, 8), operatorKey.slice(-4)]) expect(text).not.toContain(part);
    // With the caller's own key, the provider's answer is the caller's to read, unchanged.
    const own = await post("/openai/v1/chat/completions", body, { authorization: "Bearer sk-caller-own-key-9876" }, {});
    expect(JSON.parse(await own.text()).error.message).toMatch(/sk-calle\*+9876/);
  });

  it("operator's key: an error body too large to clean, or that stops, is answered with the provider's status and says which", async () => {
    const vars = {
      OPENAI_API_KEY: "sk-proj-operator0secret0key0wxyz",
      API_TOKENS: "svc-token-1",
      PROXY_TIMEOUT_SECONDS: "10",
    };
    const headers = { authorization: "Bearer svc-token-1" };
    const ask = async (marker: string) => {
      const body = { model: "gpt-4o", messages: [{ role: "user", content: `${marker} ${uniqueToken()}` }] };
      const answer = await post("/openai/v1/chat/completions", body, headers, vars);
      return { status: answer.status, error: ((await answer.json()) as any).error };
    };
    const big = await ask("[fail-big:500]");
    expect(big.status).toBe(500);
    expect(big.error.message).toBe("The openai API answered 500 with an error over 64 KiB, not relayed.");
    const started = Date.now();
    const stalled = await ask("[fail-stall:401]");
    expect(stalled.status).toBe(401);
    expect(stalled.error.message).toBe(
      "The openai API answered 401 with an error body that did not arrive whole within 10 s.",
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
  }, 30_000);

  it("caller's key: the service token comes in X-Service-Token, the caller's key goes upstream unchanged", async () => {
    const vars = { API_TOKENS: "svc-token-1" };
    const tag = uniqueToken();
    const missing = await post(
      "/openai/v1/chat/completions",
      { model: "gpt-4o", messages: [{ role: "user", content: tag }] },
      { authorization: "Bearer sk-openai-caller-9" },
      vars,
    );
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as any).error).toMatchObject({
      type: "invalid_request_error",
      param: null,
      code: "unauthorized",
    });
    const ok = await post(
      "/openai/v1/chat/completions",
      { model: "gpt-4o", messages: [{ role: "user", content: tag }] },
      { authorization: "Bearer sk-openai-caller-9", "x-service-token": "svc-token-1" },
      vars,
    );
    expect(ok.status).toBe(200);
    const calls = await llmCalls(tag);
    expect(calls).toHaveLength(1);
    expect(calls[0].key_sha256).toBe(await sha256("sk-openai-caller-9"));
    expect(calls[0].headers).not.toContain("x-service-token");
  });

  it("a key header of the other provider never goes upstream, in either mode", async () => {
    for (const vars of [{}, { OPENAI_API_KEY: "sk-operator-openai", ANTHROPIC_API_KEY: "sk-ant-operator" }]) {
      const operator = "OPENAI_API_KEY" in vars;
      const tag = uniqueToken();
      const openai = await post(
        "/openai/v1/chat/completions",
        { model: "gpt-4o", messages: [{ role: "user", content: tag }] },
        { authorization: `Bearer ${operator ? "svc-anon" : "sk-openai-caller-9"}`, "x-api-key": "sk-ant-caller-1" },
        vars,
      );
      expect(openai.status).toBe(200);
      const [toOpenai] = await llmCalls(tag);
      expect(toOpenai.headers).not.toContain("x-api-key");
      expect(toOpenai.key_sha256).toBe(await sha256(operator ? "sk-operator-openai" : "sk-openai-caller-9"));
      const other = uniqueToken();
      const anthropic = await post(
        "/anthropic/v1/messages",
        { model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: other }] },
        { "x-api-key": operator ? "svc-anon" : "sk-ant-caller-1", "api-key": "sk-azure-openai-caller" },
        vars,
      );
      expect(anthropic.status).toBe(200);
      const [toAnthropic] = await llmCalls(other);
      expect(toAnthropic.headers).not.toContain("api-key");
      expect(toAnthropic.key_sha256).toBe(await sha256(operator ? "sk-ant-operator" : "sk-ant-caller-1"));
    }
  });
});

describe("the OpenAI routes", () => {
  it("chat completions, plain and streamed, and responses, plain and streamed", async () => {
    const tag = uniqueToken();
    const headers = { authorization: "Bearer sk-openai-caller-9" };
    const plain = await post(
      "/openai/v1/chat/completions",
      { model: "gpt-4o", messages: [{ role: "user", content: tag }] },
      headers,
    );
    expect(((await plain.json()) as any).choices[0].message.content).toContain("Emulated answer");
    // OpenAI names its request id X-Request-Id: relayed unchanged, the service's own beside it.
    expect(plain.headers.get("x-request-id")).toMatch(/^req_emu/);
    expect(plain.headers.get("x-edge-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const streamed = await post(
      "/openai/v1/chat/completions",
      { model: "gpt-4o", stream: true, messages: [{ role: "user", content: tag }] },
      headers,
    );
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    expect(streamed.headers.get("x-request-id")).toMatch(/^req_emu_stream/);
    expect((await streamed.text()).trim().endsWith("data: [DONE]")).toBe(true);
    const responses = await post("/openai/v1/responses", { model: "gpt-4o", input: `hi ${tag}` }, headers);
    expect(((await responses.json()) as any).output[0].content[0].text).toContain("Emulated answer");
    const streamedResponses = await post(
      "/openai/v1/responses",
      { model: "gpt-4o", stream: true, input: `hi ${tag}` },
      headers,
    );
    expect(await streamedResponses.text()).toContain("event: response.completed");
    expect(await llmCalls(tag)).toHaveLength(4);
  });

  /** A Chat Completions computer-use conversation: the agent's system message, the task, `shots` screenshot turns. */
  const chat = (task: string, shots: readonly string[]) => ({
    model: "gpt-4o",
    messages: [
      { role: "system", content: "You are a computer-use agent. Take screenshots to see the screen." },
      { role: "user", content: task },
      ...shots.flatMap((url, i) => [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: `c${i}`, type: "function", function: { name: "screenshot", arguments: "{}" } }],
        },
        {
          role: "tool",
          tool_call_id: `c${i}`,
          content: [
            { type: "text", text: `shot ${i}` },
            { type: "image_url", image_url: { url } },
          ],
        },
      ]),
    ],
  });

  it("keeps two Chat conversations of one agent apart: the session is derived from the first message after the system ones", async () => {
    const tag = uniqueToken();
    const headers = { authorization: `Bearer sk-${tag}` };
    const a = await post("/openai/v1/chat/completions", chat(`book a flight ${tag}`, []), headers);
    const b = await post("/openai/v1/chat/completions", chat(`fix my printer ${tag}`, []), headers);
    expect(a.headers.get("x-edge-session")).not.toBe(b.headers.get("x-edge-session"));
    const again = await post("/openai/v1/chat/completions", chat(`book a flight ${tag}`, []), headers);
    expect(again.headers.get("x-edge-session")).toBe(a.headers.get("x-edge-session"));
  });

  it("never takes another conversation's request for this one's: its expired cache stays expired", async () => {
    const shots: string[] = [];
    for (let i = 0; i < 13; i++) shots.push(`data:image/png;base64,${await screenshot(320, 200, i)}`);
    const retiredOnReturn = async (interleave: boolean) => {
      const tag = uniqueToken();
      let now = Date.parse("2026-12-01T10:00:00Z");
      const app = createApp(workersDeps(testEnv, { clock: () => now }));
      const send = async (body: unknown) => {
        const response = await app.fetch(
          new Request("https://service.test/openai/v1/chat/completions", {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer sk-${tag}` },
            body: JSON.stringify(body),
          }),
          testEnv,
        );
        await response.text();
        return Number(response.headers.get("x-edge-retired"));
      };
      await send(chat(`fix my printer ${tag}`, shots.slice(0, 10)));
      now += 4 * 60_000;
      if (interleave) await send(chat(`book a flight ${tag}`, shots.slice(12, 13)));
      now += 2 * 60_000; // the printer conversation's last request was 6 minutes ago: its cache expired
      return send(chat(`fix my printer ${tag}`, shots.slice(0, 11)));
    };
    const alone = await retiredOnReturn(false);
    expect(alone).toBeGreaterThan(0); // the cold-cache rule retires
    expect(await retiredOnReturn(true)).toBe(alone);
  });

  it("answers malformed JSON with a 400 in OpenAI's shape", async () => {
    const response = await post("/openai/v1/chat/completions", "{nope", { authorization: "Bearer k" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({
      type: "invalid_request_error",
      param: null,
      code: "invalid_json",
    });
  });
});

describe("the outbound transform", () => {
  it("fits a tool screenshot over the budget, keeps the fit by its hash, and leaves a user upload under the provider's limits alone", async () => {
    const tag = uniqueToken();
    const big = await screenshot(2400, 1500, 7);
    const upload = await screenshot(1800, 1200, 8);
    const body = anthropicBody(tag, {
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: upload } },
            { type: "text", text: `look ${tag}` },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: big } }],
            },
            { type: "text", text: `go on ${tag}` },
          ],
        },
      ],
    });
    const first = await post("/anthropic/v1/messages", body, { "x-api-key": "k" });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-edge-fitted")).toBe("1");
    const [seen] = await llmCalls(tag);
    expect(seen.images).toBe(2);
    // X-Edge-Bytes-Saved: the request's bytes less the bytes the provider received, never below 0.
    expect(Number(first.headers.get("x-edge-bytes-saved"))).toBe(
      Math.max(0, JSON.stringify(body).length - seen.body_bytes),
    );
    // The upload went as it came (a PNG's base64); the tool image within the budget as a JPEG.
    expect(seen.image_bytes - upload.length).toBeLessThanOrEqual(262_144);
    expect(seen.image_bytes - upload.length).toBeGreaterThan(1_000);
    const { keys } = await testEnv.CACHE.list({ prefix: "proxy:v1:fit:" });
    expect(keys.length).toBeGreaterThan(0);

    const second = await post("/anthropic/v1/messages", body, { "x-api-key": "k" });
    expect(second.headers.get("x-edge-fitted")).toBe("1");
    const calls = await llmCalls(tag);
    expect(calls[1].body_bytes).toBe(calls[0].body_bytes); // the same bytes out
  });

  it("never scales an image whose block asks the provider to refuse it rather than downsize it (transformations.oversized_image: error)", async () => {
    const tag = uniqueToken();
    const big = await screenshot(2400, 1500, 7);
    const wide = await screenshot(8200, 64, 9);
    const exact = { oversized_image: "error" };
    const body = anthropicBody(tag, {
      messages: [
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [
                {
                  type: "image",
                  source: { type: "base64", media_type: "image/png", data: big },
                  transformations: exact,
                },
              ],
            },
            { type: "text", text: `go on ${tag}` },
          ],
        },
      ],
    });
    const kept = await post("/anthropic/v1/messages", body, { "x-api-key": "k" });
    expect(kept.status).toBe(200);
    expect(kept.headers.get("x-edge-fitted")).toBe("0");
    const [seen] = await llmCalls(tag);
    expect(seen.image_bytes).toBe(big.length);
    // One the provider refuses: its own 400 (naming the sizes) reaches the caller, as asked.
    const refused = await post(
      "/anthropic/v1/messages",
      anthropicBody(uniqueToken(), {
        messages: [
          {
            role: "user",
            content: [
              {
                type: "image",
                source: { type: "base64", media_type: "image/png", data: wide },
                transformations: exact,
              },
              { type: "text", text: "read this" },
            ],
          },
        ],
      }),
      { "x-api-key": "k" },
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-edge-fitted")).toBe("0");
  });

  it.each([
    ["PNG", "image/png"],
    ["WebP (its size 20 KB into the base64)", "image/webp"],
  ])(
    "fits a user upload the provider would refuse (a side over 8,000 px), which it then accepts: %s",
    async (_, mediaType) => {
      const tag = uniqueToken();
      const wide =
        mediaType === "image/png"
          ? await screenshot(8200, 64, 9)
          : toBase64(webpFrom(screenshotPixels(8200, 64, 9), 8200, 64));
      const body = anthropicBody(tag, {
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: mediaType, data: wide } },
              { type: "text", text: `read this ${tag}` },
            ],
          },
        ],
      });
      expect((await sendDirect(body)).status).toBe(400);
      const response = await post("/anthropic/v1/messages", body, { "x-api-key": "k" });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-edge-fitted")).toBe("1");
    },
  );

  it("leaves an upload of 5.1 million base64 characters alone (Anthropic's 5 MB is 5,242,880 of them) and fits one past it", async () => {
    const tag = uniqueToken();
    // Noise PNGs: their base64 grows with their height, 4,500 characters a row of 1,125 pixels.
    const noise = async (height: number) => {
      const pixels = new Uint8Array(1125 * height * 3);
      let state = height;
      for (let i = 0; i < pixels.length; i++) {
        state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
        pixels[i] = state >>> 24;
      }
      return toBase64(await encodePng(pixels, 1125, height, 3));
    };
    const under = await noise(1_133);
    const over = await noise(1_170);
    expect(under.length).toBeGreaterThan(5_050_000);
    expect(under.length).toBeLessThan(5 * 1024 * 1024);
    expect(over.length).toBeGreaterThan(5 * 1024 * 1024);
    const upload = (data: string, label: string) =>
      anthropicBody(`${tag}-${label}`, {
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data } },
              { type: "text", text: `look ${tag}-${label}` },
            ],
          },
        ],
      });
    const kept = await post("/anthropic/v1/messages", upload(under, "under"), { "x-api-key": "k" });
    expect(kept.status).toBe(200);
    expect(kept.headers.get("x-edge-fitted")).toBe("0");
    expect((await llmCalls(`${tag}-under`))[0].image_bytes).toBe(under.length);
    const fitted = await post("/anthropic/v1/messages", upload(over, "over"), { "x-api-key": "k" });
    expect(fitted.status).toBe(200);
    expect(fitted.headers.get("x-edge-fitted")).toBe("1");
    expect((await llmCalls(`${tag}-over`))[0].image_bytes).toBeLessThan(5 * 1024 * 1024);
  });

  it("fits the oldest uploads of a request over Anthropic's 32 MB, which it refuses whole, until it is under: the same ones as the session grows", async () => {
    const tag = uniqueToken();
    // Noise PNGs of 1500x700 (about 4.2 MB of base64 each, under the 5 MB an image): 8 make 33.6 MB.
    const noise = async (seed: number) => {
      const pixels = new Uint8Array(1500 * 700 * 3);
      let state = seed;
      for (let i = 0; i < pixels.length; i++) {
        state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
        pixels[i] = state >>> 24;
      }
      return toBase64(await encodePng(pixels, 1500, 700, 3));
    };
    const uploads: string[] = [];
    for (let i = 0; i < 9; i++) uploads.push(await noise(i + 1));
    expect(Math.max(...uploads.map((data) => data.length))).toBeLessThan(5_000_000);
    const conversation = (count: number) =>
      anthropicBody(tag, {
        messages: uploads
          .slice(0, count)
          .flatMap((data, i) => [
            {
              role: "user",
              content: [
                { type: "image", source: { type: "base64", media_type: "image/png", data } },
                { type: "text", text: `upload ${i} ${tag}` },
              ],
            },
            { role: "assistant", content: `seen ${i}` },
          ])
          .slice(0, -1),
      });
    const eight = conversation(8);
    expect(JSON.stringify(eight).length).toBeGreaterThan(32_000_000);
    expect((await sendDirect(eight)).status).toBe(413);

    const first = await post("/anthropic/v1/messages", eight, { "x-api-key": "k" });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-edge-fitted")).toBe("1");
    const nine = await post("/anthropic/v1/messages", conversation(9), { "x-api-key": "k" });
    expect(nine.status).toBe(200);
    expect(nine.headers.get("x-edge-fitted")).toBe("2");
    const [, seenEight, seenNine] = await llmCalls(tag); // the first is the direct call
    expect(seenEight.body_bytes).toBeLessThanOrEqual(32_000_000);
    expect(seenNine.body_bytes).toBeLessThanOrEqual(32_000_000);
    // The first upload went fitted both times, as the same bytes: the eight-upload request's
    // outbound copy is a prefix of the nine-upload one up to the second upload.
    const sent = [seenEight, seenNine].map((seen) => seen.image_bytes as number);
    expect(sent[0]).toBeLessThan(uploads.slice(1, 8).reduce((sum, data) => sum + data.length, 0) + 262_144);
    expect(sent[1]).toBeLessThan(uploads.slice(2, 9).reduce((sum, data) => sum + data.length, 0) + 2 * 262_144);
  }, 120_000);

  it("forwards an image the fitter refuses as it is", async () => {
    const tag = uniqueToken();
    const broken = `iVBORw0KGgo${"A".repeat(300_000)}`;
    const body = oneToolImage(tag, broken);
    const response = await post("/anthropic/v1/messages", body, { "x-api-key": "k" });
    expect(response.headers.get("x-edge-fitted")).toBe("0");
    const [seen] = await llmCalls(tag);
    expect(seen.image_bytes).toBe(broken.length);
    // The refusal is kept like a fit, so the session's next requests do not decode the image again.
    const key = `proxy:v1:fit:${await sha256(`262144:1568:14745600:${broken}`)}`;
    expect(JSON.parse((await testEnv.CACHE.get(key)) ?? "null")?.value).toEqual({ refused: true });
  });

  it("fits to the model's own edge when vision.max_long_edge is above it: 21 tool screenshots of 2,400 px to Anthropic's 2,000", async () => {
    const tag = uniqueToken();
    const shot = await screenshot(2400, 1350, 11);
    const messages = screenshotSession(`start ${tag}`, shot, 21);
    const body = anthropicBody(tag, { messages });
    const direct = await fetch(`${EMULATOR}/llm/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: JSON.stringify(body),
    });
    expect(direct.status).toBe(400); // over 2,000 px in a request of more than 20 images
    const vars = { VISION_MAX_LONG_EDGE: "2576", PROXY_STRATEGY: "off" };
    const response = await post("/anthropic/v1/messages", body, { "x-api-key": "k" }, vars);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("21");
  });

  it("reads the size of base64 wrapped in lines, and fits a tool image over the long edge however small its bytes", async () => {
    const tag = uniqueToken();
    const flat = toBase64(await encodePng(new Uint8Array(3000 * 2000 * 3).fill(180), 3000, 2000, 3));
    const wrapped = `\n${flat.replace(/(.{76})/g, "$1\r\n")}`;
    const body = oneToolImage(tag, wrapped);
    const response = await post("/anthropic/v1/messages", body, { "x-api-key": "k" }, { PROXY_STRATEGY: "off" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("1");
  });

  it("declares a tool image as what its bytes are: a PNG labelled image/jpeg goes out as image/png, not refitted", async () => {
    const tag = uniqueToken();
    const body = oneToolImage(tag, await screenshot(400, 300, 13));
    (body.messages[2] as any).content[0].content[0].source.media_type = "image/jpeg";
    const direct = await fetch(`${EMULATOR}/llm/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" },
      body: JSON.stringify(body),
    });
    expect([direct.status, ((await direct.json()) as any).error.message]).toEqual([
      400,
      "image 0: Image does not match the provided media type image/jpeg",
    ]);
    const response = await post("/anthropic/v1/messages", body, { "x-api-key": "k" }, { PROXY_STRATEGY: "off" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("0");
  });

  it("fits at most 100 images of one request, the newest: the rest go as they came", async () => {
    const tag = uniqueToken();
    const content: unknown[] = [];
    for (let i = 0; i < 130; i++) {
      const line = await encodePng(new Uint8Array(4000 * 4 * 3).fill(i), 4000, 4, 3);
      content.push({ type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(line)}` } });
    }
    const body = {
      model: "gpt-4o",
      messages: [
        { role: "user", content: `lines ${tag}` },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "lines", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content },
      ],
    };
    const response = await post(
      "/openai/v1/chat/completions",
      body,
      { authorization: "Bearer k" },
      { PROXY_STRATEGY: "off" },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("100");
  });

  it("fits a computer-use screenshot (Responses computer_call_output) over the long edge, keeping its item's shape", async () => {
    const tag = uniqueToken();
    const url = `data:image/png;base64,${await screenshot(2400, 1500, 14)}`;
    const body = {
      model: "gpt-4o",
      instructions: `You operate a browser ${tag}.`,
      input: [
        { role: "user", content: [{ type: "input_text", text: `open the page ${tag}` }] },
        { type: "computer_call", call_id: "c1", action: { type: "screenshot" }, pending_safety_checks: [] },
        { type: "computer_call_output", call_id: "c1", output: { type: "computer_screenshot", image_url: url } },
      ],
    };
    const response = await post("/openai/v1/responses", body, { authorization: "Bearer k" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("1");
    const [seen] = await llmCalls(tag);
    expect(seen.images).toBe(1);
    expect(seen.image_bytes).toBeLessThanOrEqual(262_144); // the fit, in its computer_screenshot
  });

  it("fits a tool image in a Responses custom_tool_call_output as in a function_call_output", async () => {
    const tag = uniqueToken();
    const url = `data:image/png;base64,${await screenshot(2400, 1500, 12)}`;
    const body = {
      model: "gpt-4o",
      input: [
        { role: "user", content: [{ type: "input_text", text: `open the page ${tag}` }] },
        { type: "custom_tool_call", call_id: "c1", name: "shot", input: "" },
        {
          type: "custom_tool_call_output",
          call_id: "c1",
          output: [{ type: "input_image", image_url: url, detail: "high" }],
        },
      ],
    };
    const response = await post("/openai/v1/responses", body, { authorization: "Bearer k" }, { PROXY_STRATEGY: "off" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edge-fitted")).toBe("1");
  });

  it("retires old tool screenshots on a long session and keeps at most 4 breakpoints, one at the front", async () => {
    const tag = uniqueToken();
    const shot = await screenshot(400, 300, 3);
    const messages = screenshotSession(`task ${tag}`, shot);
    // Hermes's breakpoints: the system prompt and the last 3 messages.
    for (const m of messages.slice(-3)) {
      const content = Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }];
      content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: "ephemeral" } };
      m.content = content;
    }
    const body = {
      model: MODEL,
      max_tokens: 64,
      system: [{ type: "text", text: `agent ${tag}`, cache_control: { type: "ephemeral" } }],
      messages,
    };
    const { response, retired, seen } = await sendSession(body, tag);
    // Each retired screenshot is bytes not sent: X-Edge-Bytes-Saved says how many.
    const saved = Number(response.headers.get("x-edge-bytes-saved"));
    expect(saved).toBe(JSON.stringify(body).length - seen.body_bytes);
    expect(saved).toBeGreaterThan(retired * (shot.length - 200));
    expect(seen.breakpoints).toBeLessThanOrEqual(4);
  });

  it("moves the caller's oldest message breakpoint to the front with the TTL the caller chose (1 hour)", async () => {
    const tag = uniqueToken();
    const shot = await screenshot(400, 300, 3);
    // A long task: the prefix up to the front is past the model's minimum cacheable length.
    const messages = screenshotSession(`task ${tag} ${"Some context. ".repeat(400)}`, shot);
    // The system prompt and the oldest of the last 3 messages at 1 hour, the two newest at 5 minutes.
    messages.slice(-3).forEach((m, k) => {
      const content = Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }];
      const marker = k === 0 ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
      content[content.length - 1] = { ...content[content.length - 1], cache_control: marker };
      m.content = content;
    });
    const body = {
      model: MODEL,
      max_tokens: 64,
      system: [{ type: "text", text: `agent ${tag}`, cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages,
    };
    const { seen } = await sendSession(body, tag);
    expect(seen.breakpoints).toBe(4);
    // The system prompt is below the minimum cacheable length: the 1-hour write is the front marker's.
    expect(seen.usage.cacheWrite1h).toBeGreaterThan(0);
  });
});

describe("usage into the ledger", () => {
  it("counts an Anthropic call's tokens by kind (5-minute and 1-hour writes apart), plain and streamed, per provider and model", async () => {
    for (const stream of [false, true]) {
      const ledger = withLedger();
      const tag = uniqueToken();
      const body = bothTtlsBody(MODEL, tag, stream);
      await ledger.send("/anthropic/v1/messages", body, { "x-api-key": `k-${tag}` });
      const [seen] = await llmCalls(tag);
      const written = await ledger.totals();
      // The buffer writes no zero: a counter absent is 0.
      const t = (name: string) => written[name] ?? 0;
      expect([t("requests"), t("errors"), t("images_fitted"), t("images_retired")]).toEqual([1, 0, 0, 0]);
      expect(t("cache_write_1h_tokens")).toBe(seen.usage.cacheWrite1h);
      expect(t("cache_write_5m_tokens")).toBe(seen.usage.cacheWrite5m);
      expect(t("cache_write_1h_tokens")).toBeGreaterThan(0);
      expect(t("cache_write_5m_tokens")).toBeGreaterThan(0);
      // Only the two TTLs are recorded; /v1/stats derives their sum (test/workers/stats.test.ts).
      expect(Object.keys(written)).not.toContain("cache_write_tokens");
      expect(t("input_tokens")).toBe(seen.usage.input);
      expect(t("cache_read_tokens")).toBe(0);
      expect(t("output_tokens")).toBe(seen.usage.output);
      expect(ledger.rows.every((e) => e.tool === "llm" && e.provider === "anthropic" && e.model === MODEL)).toBe(true);
    }
  });

  it("counts a stream's output tokens when its message_delta gives the prompt counts as null (the SDK's MessageDeltaUsage allows it)", async () => {
    const stream = [
      messageStart(MODEL, {
        input_tokens: 1200,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      }),
      sseEvent("message_delta", {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: {
          input_tokens: null,
          cache_creation_input_tokens: null,
          cache_read_input_tokens: null,
          output_tokens: 512,
        },
      }),
      sseEvent("message_stop", { type: "message_stop" }),
    ].join("");
    const { ledger, flush, sum } = recordingLedger();
    const app = createApp(
      workersDeps(testEnv, {
        ledger,
        // A stand-in for the provider: exactly this stream, with the null counts the SDK allows.
        fetch: async () => new Response(stream, { headers: { "content-type": "text/event-stream" } }),
      }),
    );
    const response = await app.fetch(
      new Request("https://service.test/anthropic/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "sk-ant-caller" },
        body: JSON.stringify({ ...anthropicBody("null-usage"), stream: true }),
      }),
      testEnv,
    );
    await response.text();
    await flush();
    expect([sum("input_tokens"), sum("output_tokens")]).toEqual([1200, 512]);
  });

  it("counts OpenAI usage with the cached part apart: chat (a stream with include_usage) and responses (streamed)", async () => {
    const ledger = withLedger();
    const tag = uniqueToken();
    const messages = [
      { role: "system", content: `${tag} ${"You are helpful. ".repeat(600)}` },
      { role: "user", content: `hi ${tag}` },
    ];
    await ledger.send("/openai/v1/chat/completions", { model: "gpt-4o", messages }, { authorization: "Bearer k" });
    await ledger.send(
      "/openai/v1/chat/completions",
      { model: "gpt-4o", messages, stream: true, stream_options: { include_usage: true } },
      { authorization: "Bearer k" },
    );
    await ledger.send(
      "/openai/v1/responses",
      { model: "gpt-4o", input: messages, stream: true },
      { authorization: "Bearer k" },
    );
    const calls = await llmCalls(tag);
    const t = await ledger.totals();
    expect(t.requests).toBe(3);
    expect(t.cache_read_tokens).toBe(calls.reduce((n, c) => n + c.usage.cacheRead, 0));
    expect(t.cache_read_tokens).toBeGreaterThan(0);
    expect(t.input_tokens).toBe(calls.reduce((n, c) => n + c.usage.input, 0));
    expect(t.output_tokens).toBe(calls.reduce((n, c) => n + c.usage.output, 0));
  });

  it("counts the provider's errors, and not count_tokens", async () => {
    const ledger = withLedger();
    const tag = uniqueToken();
    const { response } = await ledger.send(
      "/anthropic/v1/messages",
      anthropicBody(tag, { messages: [{ role: "user", content: `[fail:429] ${tag}` }] }),
      { "x-api-key": "k" },
    );
    expect(response.status).toBe(429);
    await ledger.send("/anthropic/v1/messages/count_tokens", anthropicBody(tag), { "x-api-key": "k" });
    expect(await ledger.totals()).toMatchObject({ requests: 1, errors: 1 });
  });
});
