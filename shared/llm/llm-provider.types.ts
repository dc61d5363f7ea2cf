/**
 * What the proxy needs to know of one LLM provider: its name and public URL, the secret that holds
 * the operator's key, how its SDKs send a key, the shape its errors take (the caller's SDK parses
 * it), which paths carry a conversation to transform, and how to read `usage` out of an answer.
 * One file per provider (anthropic.provider.ts, openai.provider.ts) holds its spec; providers.catalog.ts lists them.
 */
import type { WireFormat } from "./format";

/** Tokens of one answer in the disjoint kinds the ledger counts (docs/stats.md). */
export interface LlmUsage {
  /** The uncached part of the prompt. */
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** A path under the provider's prefix whose body the proxy transforms. */
export interface ProxiedPath {
  /** How the conversation sits in the body. */
  readonly format: WireFormat;
  /** Counted in the ledger as a request (`count_tokens` is not: stats.md). */
  readonly counted: boolean;
  /** Set where a stream carries usage only when the request asks for it (Chat Completions). */
  readonly streamUsage?: StreamUsage;
}

/**
 * How a stream that reports usage only on request is counted anyway: the proxy sends the request
 * asking for it, and relays each event as the caller would have had it without asking. The bill
 * is the bill: a stream the ledger cannot read is a request counted with no tokens.
 */
export interface StreamUsage {
  /** The body asking for usage, or null when it is no stream or already asks. */
  ask(body: Record<string, unknown>): Record<string, unknown> | null;
  /** An event's data as the caller would have had it without asking: the same object, another one, or null (not sent). */
  unasked(event: Record<string, unknown>): Record<string, unknown> | null;
}

/** Reads usage as an answer goes by: a whole JSON answer, or one server-sent event's data at a time. */
export interface UsageReader {
  /** A whole (non-streamed) JSON answer. */
  fromAnswer(answer: unknown): LlmUsage | null;
  /** One SSE `data:` payload (already parsed); returns the usage it settles, merged with what came before. */
  fromEvent(event: unknown, sofar: LlmUsage | null): LlmUsage | null;
}

export interface LlmProviderSpec {
  /** Its routes' prefix (`/<name>/*`), its `providers.<name>_base_url` key, and its rows' key in the model table. */
  readonly name: string;
  /** Public API origin; `providers.<name>_base_url` overrides it. */
  readonly defaultBaseUrl: string;
  /** The secret holding the operator's key (operator's key mode when set). */
  readonly secretName: string;
  /** The credential a caller's SDK sent, or null. */
  credentialOf(headers: Headers): string | null;
  /** Request headers that carry a credential (removed before the proxy sets its own). */
  readonly credentialHeaders: readonly string[];
  /** The headers that send `key` upstream. */
  withCredential(headers: Headers, key: string): void;
  /** The provider's own error body for a status and message. */
  errorBody(status: number, message: string, code: string): unknown;
  /** Paths (after the prefix) whose bodies are transformed; any other path is forwarded unchanged. */
  readonly paths: Readonly<Record<string, ProxiedPath>>;
  readonly usage: UsageReader;
}

/** Keeps a spec's literal types (its name and secret) for what the catalog derives from it. */
export const defineLlmProvider = <const S extends LlmProviderSpec>(spec: S): S => spec;

export const noUsage = (): LlmUsage => ({ input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0 });

/**
 * A usage field's bound: one count of a ledger entry is below it (stats/counters.ts
 * LEDGER_MAX_COUNT is this figure).
 */
export const MAX_TOKEN_COUNT = 1_000_000_000;

/**
 * A usage field as a token count: 0 when absent, the figure when it is a whole number from 0 to
 * below MAX_TOKEN_COUNT (10^9: no request comes near, and a hostile or broken upstream cannot put
 * billions of dollars on the dashboard), and NaN (not a count) for anything else: negative,
 * fractional, too large.
 * NaN stays NaN through the readers' arithmetic, so every figure derived from it is not counted
 * either: the ledger refuses it and logs it (LedgerBuffer.record).
 * @example tokenCount(1234) // 1234
 * @example tokenCount(1e15) // NaN
 */
export const tokenCount = (value: unknown): number => {
  if (value === undefined || value === null) return 0;
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value < MAX_TOKEN_COUNT
    ? value
    : Number.NaN;
};

/** A bearer token from an `Authorization` header, or null. */
export function bearerOf(headers: Headers): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match ? match[1]! : null;
}
