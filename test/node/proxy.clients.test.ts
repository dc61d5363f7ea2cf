/**
 * The provider proxy under `wrangler dev` (real workerd) and on Deno (deno/main.ts as a real
 * process), each in front of the loopback LLM emulator, through the official Anthropic and OpenAI
 * SDKs (test/support/llm-client.suite.ts).
 */
import { afterAll, beforeAll, describe } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack";
import { type DenoOnEmulator, startDenoOnEmulator } from "../support/deno-service";
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
  let stack: DenoOnEmulator;
  let target: ProxyTarget;
  beforeAll(async () => {
    stack = await startDenoOnEmulator({ SECURITY_ALLOW_ANONYMOUS: "true" });
    target = { url: stack.deno.url, emulatorUrl: stack.emulator.url };
  }, 90_000);
  afterAll(() => stack?.stop());
  llmClientSuite("Deno", () => target);
});
