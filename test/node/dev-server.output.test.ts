/**
 * What `npm run dev` prints, offline, as a newcomer reads it (issue 47, item 1): no stack trace of
 * wrangler's `Request.cf` fetch at start, and no workerd `[ERROR]` block with frame addresses for
 * an image the service could not fetch and already answered (`fetch_failed`, its own warning).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars, type RunningEmulator, startEmulator } from "../emulator/server";
import { type NpmRunDev, startNpmRunDev } from "./npm-run-dev";

let emulator: RunningEmulator;
let dev: NpmRunDev;

beforeAll(async () => {
  emulator = await startEmulator();
  dev = await startNpmRunDev(emulatorVars(emulator.url));
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await emulator?.close();
});

describe("npm run dev, offline", () => {
  it("prints no Request.cf fetch failure at start", () => {
    expect(dev.output()).toContain("Ready on");
    expect(dev.output()).not.toMatch(/Request\.cf|workers\.cloudflare\.com|ENOTFOUND/);
  });

  it("prints the service's own warning for an image it could not fetch, and no workerd error block", async () => {
    // The emulated DNS approves the name as public; the machine's resolver knows no such name
    // (.invalid never resolves, RFC 6761), so workerd's fetch fails at the DNS lookup.
    const host = `shot-${Date.now().toString(36)}.nowhere.invalid`;
    await fetch(`${emulator.url}/__dns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: host, A: ["93.184.215.14"] }),
    });
    const response = await fetch(`${dev.url}/v1/vision_analyze`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ image: { url: `https://${host}/screenshot.png` } }),
    });
    expect(response.status).toBe(502);
    expect(((await response.json()) as any).error.message).toBe(
      `The image at ${host} could not be fetched: the connection failed.`,
    );
    await dev.outputLine(/"code":"fetch_failed"/);
    await dev.outputLine(/POST \/v1\/vision_analyze 502/);
    // One more request and its line: whatever the runtime printed for the failed fetch is out by now.
    await fetch(`${dev.url}/healthz`);
    await dev.outputLine(/GET \/healthz 200/);
    expect(dev.output()).not.toMatch(/\[ERROR\]/);
    expect(dev.output()).not.toMatch(/DNS lookup failed|workerd@|stack:/);
  });
});
