/**
 * Test helpers for route tests inside workerd: call the real Workers entry with the real
 * bindings (optionally with extra variables, as `.dev.vars` would add), and ask the loopback
 * emulator how often a provider was paid.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect, vi } from "vitest";
import { env } from "cloudflare:workers";
import worker from "../../workers/index";
import type { WorkerEnv } from "../../workers/env";
import { LEDGER_OBJECT } from "../../workers/ledger.do";
import { loadConfig } from "../../shared/config/config.load";
import { createApp } from "../../shared/app/app";
import { recordingLedger } from "../support/recording-ledger";
import { workersDeps } from "../../workers/deps";
import { emulatorCalls, llmCalls as emulatorLlmCalls } from "../support/emulator-client";

export const testEnv = env as unknown as WorkerEnv;
export const EMULATOR = testEnv.EMULATOR_URL as string;

export { uniqueToken } from "../support/emulator-client";

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
  /** Extra environment variables for this call (flat `SECTION_KEY` overrides, secrets). */
  vars?: Record<string, unknown>;
  /** Where the service is reached (the request URL's origin, so its Host): https://service.test unless given. */
  at?: string;
}

export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const method = options.method ?? (options.body !== undefined || options.raw !== undefined ? "POST" : "GET");
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers = { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...options.headers };
  const request = new Request(`${options.at ?? "https://service.test"}${path}`, { method, headers, body });
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, options.vars ? { ...testEnv, ...options.vars } : testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

export async function callJson(
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await call(path, options);
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** SHA-256 of `text` in hex: how the LLM emulator records a key it received. */
export async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The LLM emulator's record of the calls whose system prompt, last message, or path and query contain `tag`. */
export const llmCalls = (tag: string): Promise<any[]> => emulatorLlmCalls(EMULATOR, tag);

/** A JSON POST (`body` as it is when a string) through the Workers entry, with extra variables. */
export const postJson = (
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  vars?: Record<string, unknown>,
): Promise<Response> =>
  call(path, {
    method: "POST",
    raw: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
    vars,
  });

/** The app recording into the real ledger buffer (test/support/recording-ledger.ts). */
export const withLedger = () => {
  const recorded = recordingLedger();
  const app = createApp(workersDeps(testEnv, { ledger: recorded.ledger }));
  const send = async (path: string, body: unknown, headers: Record<string, string>) => {
    const response = await app.fetch(
      new Request(`https://service.test${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      }),
      testEnv,
    );
    const text = await response.text(); // the usage is read as the body goes by
    return { response, text };
  };
  /** The counters summed over every row written. */
  const totals = async () => {
    await recorded.flush();
    return recorded.totals();
  };
  return { rows: recorded.rows, send, totals };
};

/** How many calls the emulator received for `provider` whose query or URL contains `contains`. */
export const providerCalls = (provider: string, contains: string): Promise<number> =>
  emulatorCalls(EMULATOR, provider, contains);

/** Asserts the api.md error shape and returns the error object. */
export function expectErrorShape(body: any): { code: string; message: string; details?: unknown } {
  if (body?.success !== false || typeof body?.error?.code !== "string" || typeof body?.error?.message !== "string") {
    throw new Error(`not an api.md error body: ${JSON.stringify(body).slice(0, 300)}`);
  }
  return body.error;
}

/** The base64 bytes of a native vision answer: they travel once, in its provider-ready image block. */
export function imageBase64(body: any): string {
  const block = body.content[0];
  const data = block.source?.data ?? block.inline_data?.data ?? block.image_url?.url.replace(/^data:[^,]*,/, "");
  if (typeof data !== "string") throw new Error(`no image block in ${JSON.stringify(body).slice(0, 200)}`);
  return data;
}

/**
 * An Anthropic request that writes the cache at both TTLs: a long system prompt under a 1-hour
 * breakpoint, a long user message under a 5-minute one (`marker` makes the message unique).
 */
export function bothTtlsBody(model: string, marker: string, stream: boolean) {
  return {
    model,
    max_tokens: 64,
    stream,
    system: [
      {
        type: "text",
        text: `${marker} ${"A long system prompt. ".repeat(300)}`,
        cache_control: { type: "ephemeral", ttl: "1h" },
      },
    ],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: `${marker} ${"Some context. ".repeat(400)}`, cache_control: { type: "ephemeral" } },
        ],
      },
    ],
  };
}

/** One server-sent event as the providers write it. */
export const sseEvent = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Anthropic's streamed `message_start`, whose `usage` is the prompt's (billed from here on). */
export const messageStart = (model: string, usage: Record<string, unknown>): string =>
  sseEvent("message_start", {
    type: "message_start",
    message: { id: "msg_1", type: "message", role: "assistant", model, content: [], usage },
  });

/**
 * The counts (money left out) the LedgerDO itself holds for one model over the last 24 hours (an
 * hour that turns while a test runs keeps its counts): read from the object, not through the
 * Worker, whose requests flush on their own account.
 */
export async function ledgerCountsOf(model: string): Promise<Record<string, number> | undefined> {
  const ledger = testEnv.LEDGER.get(testEnv.LEDGER.idFromName(LEDGER_OBJECT));
  const answer = await ledger.report({ window: "24h", now: Date.now(), pricing: loadConfig({}).config.pricing });
  const counts = answer.by_model.llm[model];
  return counts && Object.fromEntries(Object.entries(counts).filter(([name]) => !name.endsWith("_usd")));
}

/** The LedgerDO's counts for `model` once `requests` requests are stored and `also` (an assertion) holds. */
export async function ledgerCountsAfter(
  model: string,
  requests: number,
  also: (counts: Record<string, number>) => void = () => {},
): Promise<Record<string, number>> {
  let counts: Record<string, number> | undefined;
  await vi.waitFor(
    async () => {
      counts = await ledgerCountsOf(model);
      expect(counts?.requests).toBe(requests);
      also(counts!);
    },
    { timeout: 10_000, interval: 50 },
  );
  return counts!;
}

/**
 * A screenshot tool call and its result carrying `data` as a base64 PNG, in Anthropic messages:
 * the assistant's `tool_use` named `id`, then the user's `tool_result` answering it.
 */
export const screenshotCall = (id: string, data: string): { role: string; content: any[] }[] => [
  { role: "assistant", content: [{ type: "tool_use", id, name: "screenshot", input: {} }] },
  {
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: id,
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data } }],
      },
    ],
  },
];

/** The proxy transform's settings for tests that fit screenshots with retirement off. */
export const FIT_SETTINGS = {
  embedTargetBytes: 262_144,
  maxLongEdge: 1568,
  maxInputPixels: 14_745_600,
  fitUserImages: false,
  strategy: "off" as const,
};
