/**
 * `/mcp` on Deno (deno/main.ts as a real process, Deno KV on :memory:, providers on the loopback
 * emulator) through the official MCP SDK client: the same suite real-clients.test.ts runs against
 * `wrangler dev`.
 */
import { afterAll, beforeAll } from "vitest";
import { type DenoOnEmulator, startDenoOnEmulator } from "../support/deno-service";
import { type McpTarget, MCP_SUITE_VARS, mcpClientSuite } from "../support/mcp-client.suite";
import { emulatorCalls } from "../support/emulator-client";

let stack: DenoOnEmulator;
let target: McpTarget;

beforeAll(async () => {
  stack = await startDenoOnEmulator(MCP_SUITE_VARS);
  const { emulator, deno } = stack;
  target = {
    url: deno.url,
    emulatorUrl: emulator.url,
    providerCalls: (provider, contains) => emulatorCalls(emulator.url, provider, contains),
  };
}, 90_000);

afterAll(() => stack?.stop());

mcpClientSuite("Deno", () => target);
