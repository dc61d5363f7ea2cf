/**
 * The provider proxy as an operator can expose it, over real HTTP under `wrangler dev` (real
 * workerd, which hides a request's `Connection` header from the Worker) and on Deno (deno/main.ts
 * as a real process), each in front of the loopback LLM emulator: what a raw client sends (a
 * header `Connection` names, TRACE, encoded separators, near misses) and what comes back (the
 * operator's key in a header and cut across a stream's chunks). test/workers/proxy.exposure.test.ts
 * has the rest, in workerd through the Workers entry.
 */
import { request as httpRequest } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars, type LocalStack, startLocalStack } from "../../scripts/local-stack";
import { startEmulator } from "../emulator/server";
import { type DenoService, startDeno } from "../support/deno-service";

const OPERATOR_KEY = "sk-ant-api03-operator0Secret0Key0For0Tests0Only-Wq9Z";
/** Anthropic under the operator's key, OpenAI under the caller's (no OPENAI_API_KEY), one service token. */
const VARS = { ANTHROPIC_API_KEY: OPERATOR_KEY, API_TOKENS: "svc-token-1" };
const OPERATOR = { "x-api-key": "svc-token-1", "content-type": "application/json" };
const CALLER = { authorization: "Bearer sk-openai-caller-9", "x-service-token": "svc-token-1" };

interface Target {
  url: string;
  emulatorUrl: string;
}

/** One raw HTTP exchange: the path and headers go exactly as written (no client normalises them). */
function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const tagOf = () => `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const messages = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 32, messages: [{ role: "user", content: text }], ...extra });

function exposureSuite(name: string, target: () => Target) {
  const calls = async (tag: string): Promise<any[]> => {
    const response = await fetch(`${target().emulatorUrl}/llm/__calls?contains=${encodeURIComponent(tag)}`);
    return ((await response.json()) as { calls: any[] }).calls;
  };

  it(`${name}: the official SDKs keep working: Anthropic under the operator's key (plain, streamed, models), OpenAI under the caller's`, async () => {
    const tag = tagOf();
    const anthropic = new Anthropic({ baseURL: `${target().url}/anthropic`, apiKey: "svc-token-1", maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 32,
      messages: [{ role: "user", content: `plain ${tag}` }],
    });
    expect(message.content[0]?.type).toBe("text");
    const stream = anthropic.messages.stream(
      { model: "claude-sonnet-4-5", max_tokens: 32, messages: [{ role: "user", content: `streamed ${tag}` }] },
      { headers: { "anthropic-beta": "prompt-caching-2024-07-31" } },
    );
    expect(await stream.finalText()).toContain("Emulated answer");
    expect((await anthropic.models.list()).data.length).toBeGreaterThan(0);
    const openai = new OpenAI({
      baseURL: `${target().url}/openai/v1`,
      apiKey: "sk-openai-caller-9",
      defaultHeaders: { "x-service-token": "svc-token-1" },
      maxRetries: 0,
    });
    const chat = await openai.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: `chat ${tag}` }],
    });
    expect(chat.choices[0]?.message.content).toContain("Emulated answer");
    const seen = await calls(tag);
    expect(seen).toHaveLength(3);
    for (const call of seen) {
      expect(call.headers).toContain("x-stainless-lang");
      expect(call.headers).toContain("user-agent");
      expect(call.headers).not.toContain("x-service-token");
    }
    expect(seen.find((call) => call.stream).headers).toContain("anthropic-beta");
  });

  it(`${name}: a header the request's Connection names, and any header off the list, stay here`, async () => {
    const tag = tagOf();
    const answer = await send(
      target().url,
      "POST",
      "/anthropic/v1/messages",
      {
        ...OPERATOR,
        "anthropic-version": "2023-06-01",
        connection: "keep-alive, X-Internal-Hop",
        "x-internal-hop": "this hop only",
        "x-internal-user": "alice",
      },
      messages(tag),
    );
    expect(answer.status, answer.text).toBe(200);
    const [seen] = await calls(tag);
    expect(seen.headers).toContain("anthropic-version");
    expect(seen.headers).not.toContain("x-internal-hop");
    expect(seen.headers).not.toContain("x-internal-user");
  });

  it(`${name}: caller's key: a service token in the provider's other key header does not go upstream`, async () => {
    const tag = tagOf();
    const answer = await send(
      target().url,
      "POST",
      "/openai/v1/chat/completions",
      {
        ...CALLER,
        "api-key": "svc-token-1",
        "content-type": "application/json",
      },
      JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: tag }] }),
    );
    expect(answer.status, answer.text).toBe(200);
    const [seen] = await calls(tag);
    expect(seen.headers).not.toContain("api-key");
    expect(seen.headers).not.toContain("x-service-token");
  });

  it(`${name}: TRACE and PUT are a 405 in the provider's shape`, async () => {
    for (const method of ["TRACE", "PUT"]) {
      const tag = tagOf();
      const answer = await send(target().url, method, `/openai/v1/echo/${tag}`, CALLER);
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe("GET, POST, DELETE, OPTIONS");
      expect(JSON.parse(answer.text).error.code).toBe("method_not_allowed");
      expect(await calls(tag)).toHaveLength(0);
    }
  });

  it(`${name}: an encoded slash, backslash or dot segment never leaves the base path`, async () => {
    for (const path of [
      "/v1/..%2f..%2fopenai/v1/echo",
      "/v1/..%5C..%5Copenai/v1/echo",
      "/v1/%252e%252e/x",
      "//v1/echo",
    ]) {
      const tag = tagOf();
      const answer = await send(target().url, "GET", `/openai${path}/${tag}`, CALLER);
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.text).error.type).toBe("invalid_request_error");
      expect(await calls(tag)).toHaveLength(0);
    }
    // Dot segments as the URL parser reads them: whatever route they land on, nothing goes upstream.
    const tag = tagOf();
    const answer = await send(target().url, "GET", `/openai/v1/%2e%2e/%2e%2e/%2e%2e/anthropic/v1/echo/${tag}`, CALLER);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(await calls(tag)).toHaveLength(0);
  });

  it(`${name}: /v1/messages/ is the conversation (transformed, sent as /v1/messages); //v1/messages is refused`, async () => {
    const tag = tagOf();
    const near = await send(target().url, "POST", "/anthropic/v1/messages/", OPERATOR, messages(tag));
    expect(near.status, near.text).toBe(200);
    expect(near.headers["x-edge-session"]).toMatch(/^[0-9a-f]{32}$/);
    expect((await calls(tag)).map((seen) => seen.path)).toEqual(["/v1/messages"]);
    const other = tagOf();
    const empty = await send(target().url, "POST", "/anthropic//v1/messages", OPERATOR, messages(other));
    expect(empty.status).toBe(400);
    expect(await calls(other)).toHaveLength(0);
  });

  it(`${name}: with the operator's key, a path off the list is a 403 naming proxy.allowed_paths`, async () => {
    const tag = tagOf();
    const answer = await send(target().url, "POST", `/anthropic/v1/messages/batches?${tag}`, OPERATOR, "{}");
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.text).error).toMatchObject({ type: "permission_error" });
    expect(answer.text).toContain("proxy.allowed_paths");
    expect(await calls(tag)).toHaveLength(0);
  });

  it(`${name}: the operator's key comes back in no header and no stream chunk, however it is written`, async () => {
    for (const form of ["plain", "escaped", "ellipsis", "stars"]) {
      const answer = await send(
        target().url,
        "POST",
        "/anthropic/v1/messages",
        OPERATOR,
        messages(`[leak:${form}] ${tagOf()}`, { stream: true }),
      );
      expect(answer.status).toBe(200);
      expect(answer.headers["x-echo-key"]).toBe("[redacted]");
      expect(answer.text).toContain("your key: [redacted]");
      expect(answer.text).toContain("last event");
      expect(answer.text).not.toContain(OPERATOR_KEY.slice(-4));
      expect(answer.text.toLowerCase()).not.toContain("\\u0073\\u006b");
    }
  });
}

describe("wrangler dev", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ vars: VARS });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });
  exposureSuite("wrangler dev", () => ({ url: stack.url, emulatorUrl: stack.emulatorUrl }));
});

describe("Deno", () => {
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  let deno: DenoService;
  beforeAll(async () => {
    emulator = await startEmulator();
    deno = await startDeno({ env: { ...emulatorVars(emulator.url), DENO_KV_PATH: ":memory:", ...VARS } });
  }, 90_000);
  afterAll(async () => {
    await deno?.stop();
    await emulator?.close();
  });
  exposureSuite("Deno", () => ({ url: deno.url, emulatorUrl: emulator.url }));
});
