/**
 * How the agents of the session tests mark their prompt for the provider's cache: Hermes's
 * `system_and_3`, a `cache_control` breakpoint on the last block of each of the last 3 messages
 * (the system prompt carries its own); and how a session is sent straight to the emulator, to be
 * billed beside the same session through the proxy.
 */
import { expect } from "vitest";
import { EMULATOR } from "./helpers";

export { systemAnd3 } from "../../cli/replay/text-sessions";

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
