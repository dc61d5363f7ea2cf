/**
 * How the agents of the session tests mark their prompt for the provider's cache: Hermes's
 * `system_and_3`, a `cache_control` breakpoint on the last block of each of the last 3 messages
 * (the system prompt carries its own); and how a session is sent straight to the emulator, to be
 * billed beside the same session through the proxy.
 */
import { expect } from "vitest";
import { EMULATOR } from "./helpers";

/** The messages as Hermes marks them: a breakpoint on the last block of each of the last 3. */
export function systemAnd3(messages: any[]): any[] {
  return messages.map((m, i) =>
    i < messages.length - 3 || typeof m.content === "string"
      ? m
      : {
          ...m,
          content: m.content.map((b: any, j: number) =>
            j === m.content.length - 1 ? { ...b, cache_control: { type: "ephemeral" } } : b,
          ),
        },
  );
}

/**
 * One Messages request sent straight to the LLM emulator, as an agent without the service would,
 * under the key `key-<way>-<tag>`: each way of sending a session billed apart.
 */
export async function sendDirect(way: string, tag: string, body: unknown): Promise<void> {
  const direct = await fetch(`${EMULATOR}/llm/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": `key-${way}-${tag}` },
    body: JSON.stringify(body),
  });
  expect(direct.status).toBe(200);
  await direct.arrayBuffer();
}
