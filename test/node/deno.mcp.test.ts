/**
 * `/mcp` on Deno (deno/main.ts as a real process, Deno KV on :memory:, providers on the loopback
 * emulator) through the official MCP SDK client: the same suite real-clients.test.ts runs against
 * `wrangler dev`.
 */
import { afterAll, beforeAll } from "vitest";
import { emulatorVars } from "../../scripts/local-stack";
import { startEmulator } from "../emulator/server";
import { type DenoService, startDeno } from "../support/deno-service";
import { type McpTarget, MCP_SUITE_VARS, mcpClientSuite } from "../support/mcp-client.suite";
import { emulatorCalls } from "../support/emulator-client";

let emulator: Awaited<ReturnType<typeof startEmulator>>;
let deno: DenoService;
let target: McpTarget;

beforeAll(async () => {
  emulator = await startEmulator();
  deno = await startDeno({ env: { ...emulatorVars(emulator.url), DENO_KV_PATH: ":memory:", ...MCP_SUITE_VARS } });
  target = {
    url: deno.url,
    emulatorUrl: emulator.url,
    providerCalls: (provider, contains) => emulatorCalls(emulator.url, provider, contains),
  };
}, 90_000);

afterAll(async () => {
  if (process.env.DEBUG_DENO) console.log(deno?.output());
  await deno?.stop();
  await emulator?.close();
});

mcpClientSuite("Deno", () => target);
