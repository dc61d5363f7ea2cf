/**
 * What `npm run dev` prints, offline, as a newcomer reads it (issue 47, item 1): no stack trace of
 * wrangler's `Request.cf` fetch at start, and no workerd `[ERROR]` block with frame addresses for
 * an image the service could not fetch and already answered (`fetch_failed`, its own warning).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/local-stack";
import { emulatorVars, type RunningEmulator, startEmulator } from "../emulator/server";

let emulator: RunningEmulator;
let child: ChildProcess;
let state: string;
let url: string;
let output = "";
/** Checks waiting for a line; each returns true (and leaves) once its line is there. */
const waiters = new Set<() => boolean>();

/** Resolves once the output has a line matching `pattern` (or rejects after `ms`, naming it). */
function outputLine(pattern: RegExp, ms = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line ${pattern} within ${ms} ms:\n${output}`)), ms);
    const check = () => {
      if (!pattern.test(output)) return false;
      clearTimeout(timer);
      resolve();
      return true;
    };
    if (!check()) waiters.add(check);
  });
}

beforeAll(async () => {
  emulator = await startEmulator();
  const port = await freePort();
  state = mkdtempSync(join(tmpdir(), "edge-tools-dev-output-"));
  const vars = Object.entries(emulatorVars(emulator.url)).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  const args = ["run", "dev", "--", "--ip", "127.0.0.1", "--port", String(port)];
  args.push("--inspector-port", String(await freePort()), "--persist-to", state, ...vars);
  // As a newcomer runs it: no CLOUDFLARE_CF_FETCH_ENABLED of their own, and not NODE_ENV=test
  // (vitest's, under which miniflare skips the Request.cf fetch by itself).
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true" };
  delete env.CLOUDFLARE_CF_FETCH_ENABLED;
  delete env.NODE_ENV;
  child = spawn("npm", args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  for (const stream of [child.stdout, child.stderr])
    stream?.on("data", (chunk) => {
      output += String(chunk);
      for (const check of waiters) if (check()) waiters.delete(check);
    });
  url = `http://127.0.0.1:${port}`;
  await outputLine(/Ready on/, 90_000);
}, 120_000);

afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-child.pid, "SIGTERM");
    await exited;
  }
  await emulator?.close();
  if (state) rmSync(state, { recursive: true, force: true });
});

describe("npm run dev, offline", () => {
  it("prints no Request.cf fetch failure at start", () => {
    expect(output).toContain("Ready on");
    expect(output).not.toMatch(/Request\.cf|workers\.cloudflare\.com|ENOTFOUND/);
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
    const response = await fetch(`${url}/v1/vision_analyze`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ image: { url: `https://${host}/screenshot.png` } }),
    });
    expect(response.status).toBe(502);
    expect(((await response.json()) as any).error.message).toBe(
      `The image at ${host} could not be fetched: the connection failed.`,
    );
    await outputLine(/"code":"fetch_failed"/);
    await outputLine(/POST \/v1\/vision_analyze 502/);
    // One more request and its line: whatever the runtime printed for the failed fetch is out by now.
    await fetch(`${url}/healthz`);
    await outputLine(/GET \/healthz 200/);
    expect(output).not.toMatch(/\[ERROR\]/);
    expect(output).not.toMatch(/DNS lookup failed|workerd@|stack:/);
  });
});
