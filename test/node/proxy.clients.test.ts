/**
 * The provider proxy under `wrangler dev` (real workerd) and on Deno (deno/main.ts as a real
 * process), each in front of the loopback LLM emulator, through the official Anthropic and OpenAI
 * SDKs (test/support/llm-client.suite.ts).
 */
import { afterAll, beforeAll, describe } from "vitest";
import { emulatorVars, type LocalStack, startLocalStack } from "../../scripts/local-stack";
import { startEmulator } from "../emulator/server";
import { type DenoService, startDeno } from "../support/deno-service";
import { llmClientSuite, type ProxyTarget } from "../support/llm-client.suite";

describe("wrangler dev", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });
  llmClientSuite("wrangler dev", () => ({ url: stack.url, emulatorUrl: stack.emulatorUrl }));
});

describe("Deno", () => {
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  let deno: DenoService;
  let target: ProxyTarget;
  beforeAll(async () => {
    emulator = await startEmulator();
    deno = await startDeno({
      env: { ...emulatorVars(emulator.url), DENO_KV_PATH: ":memory:", SECURITY_ALLOW_ANONYMOUS: "true" },
    });
    target = { url: deno.url, emulatorUrl: emulator.url };
  }, 90_000);
  afterAll(async () => {
    await deno?.stop();
    await emulator?.close();
  });
  llmClientSuite("Deno", () => target);
});
