/**
 * What tests ask the loopback emulator (test/emulator/server.ts), and the small helpers every
 * test file needs: web-standard APIs only, so workerd, Node and Deno tests share them.
 */
import type { LlmCall } from "../emulator/llm";
import type { EmulatorCall } from "../emulator/server";

/** A token that makes a test's queries and URLs unique in a shared emulator. */
export const uniqueToken = (prefix = "t"): string => `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;

/** The calls the emulator received for `provider` whose query or URL contains `contains`. */
export async function emulatorCallList(emulator: string, provider: string, contains: string): Promise<EmulatorCall[]> {
  const query = `provider=${encodeURIComponent(provider)}&contains=${encodeURIComponent(contains)}`;
  const response = await fetch(`${emulator}/__calls?${query}`);
  return ((await response.json()) as { calls: EmulatorCall[] }).calls;
}

/** How many calls the emulator received for `provider` whose query or URL contains `contains`. */
export async function emulatorCalls(emulator: string, provider: string, contains: string): Promise<number> {
  return (await emulatorCallList(emulator, provider, contains)).length;
}

/** The LLM emulator's record of the calls whose system prompt, last message or path contains `tag`. */
export async function llmCalls(emulator: string, tag: string): Promise<LlmCall[]> {
  const response = await fetch(`${emulator}/llm/__calls?contains=${encodeURIComponent(tag)}`);
  return ((await response.json()) as { calls: LlmCall[] }).calls;
}

/** POSTs `body` as JSON to `url` (extra headers beside the content type). */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** How many calls naming `[gate:ID]` have arrived at the emulator and wait there. */
export async function gateArrivals(emulator: string, id: string): Promise<number> {
  return ((await (await fetch(`${emulator}/__gate/${id}`)).json()) as { arrived: number }).arrived;
}

/** Lets every call held at `[gate:ID]`, and every later one, through. */
export async function openGate(emulator: string, id: string): Promise<void> {
  await (await fetch(`${emulator}/__gate/${id}/open`, { method: "POST" })).arrayBuffer();
}

/** Lets the calls held at `[gate:ID]` through and closes it again, with no arrivals counted. */
export async function closeGate(emulator: string, id: string): Promise<void> {
  await (await fetch(`${emulator}/__gate/${id}`, { method: "DELETE" })).arrayBuffer();
}

/** Resolves once `done` is true, asking every 10 ms; after 10 s throws, saying `why()`. */
export async function until(done: () => Promise<boolean>, why: () => string): Promise<void> {
  for (const started = Date.now(); !(await done()); await new Promise((resolve) => setTimeout(resolve, 10)))
    if (Date.now() - started > 10_000) throw new Error(`the awaited event did not happen within 10 s: ${why()}`);
}

/**
 * Holds the provider's answer until every concurrent caller of one key is in the single flight:
 * waits until `paying` calls are held at the emulator's `[gate:ID]` and `joiners()` (the flight's
 * count for the key) says the other callers joined them, then opens the gate and returns every
 * caller's answer, however slowly the callers arrived. The gate opens whatever happens (a failed
 * wait leaves nothing held); after the answers nobody may still be counted as waiting.
 */
export async function answeredTogether<T>(
  emulator: string,
  held: { gate: string; paying: number; joiners: number; count: () => Promise<number> },
  callers: (T | Promise<T>)[],
): Promise<T[]> {
  let seen = { paying: 0, joiners: 0 };
  try {
    await until(
      async () => {
        seen = { paying: await gateArrivals(emulator, held.gate), joiners: await held.count() };
        return seen.paying === held.paying && seen.joiners === held.joiners;
      },
      () =>
        `expected ${JSON.stringify({ paying: held.paying, joiners: held.joiners })}, last saw ${JSON.stringify(seen)}`,
    );
  } finally {
    await openGate(emulator, held.gate);
  }
  const answers = await Promise.all(callers);
  const left = await held.count();
  if (left !== 0) throw new Error(`${left} callers still counted as waiting after every answer came back`);
  return answers;
}
