/**
 * Starts the loopback provider emulator and the service under `wrangler dev` (real workerd, local
 * KV and Durable Objects, a fresh state folder), pointed at each other. Used by `npm run demo` and
 * `npm run bench`; nothing leaves 127.0.0.1.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emulatorVars, startEmulator } from "../test/emulator/server";

export { emulatorVars };

export interface LocalStack {
  /** Base URL of the service, e.g. http://127.0.0.1:8790 */
  url: string;
  emulatorUrl: string;
  /** How many calls the emulator saw for `provider` whose query/URL contains `contains`. */
  providerCalls(provider: string, contains: string): Promise<number>;
  /** The process group of `wrangler dev` and its workerd (for a benchmark that reads their memory). */
  processGroup: number;
  /** wrangler dev's inspector (Chrome DevTools protocol) port, for a benchmark that reads the isolate's heap. */
  inspectorPort: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * @param options.cwd another checkout to run (its wrangler.toml and code), e.g. a benchmark's
 *   "before" side; default the current directory
 * @param options.args more `wrangler dev` arguments, e.g. `--minify=false` for a readable CPU profile
 */
export async function startLocalStack(
  options: { vars?: Record<string, string>; quiet?: boolean; cwd?: string; args?: readonly string[] } = {},
): Promise<LocalStack> {
  const emulator = await startEmulator();
  const port = await freePort();
  // Each wrangler dev gets its own inspector port: two on the default 9229 stop each other.
  const inspectorPort = await freePort();
  const state = mkdtempSync(join(tmpdir(), "edge-tools-state-"));
  const vars = { ...emulatorVars(emulator.url), ...options.vars };
  const args = [
    "wrangler",
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    state,
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
  ];
  for (const [key, value] of Object.entries(vars)) args.push("--var", `${key}:${value}`);
  args.push(...(options.args ?? []));
  const child: ChildProcess = spawn("npx", args, {
    cwd: options.cwd,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    stdio: options.quiet === false ? "inherit" : ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr = (stderr + String(chunk)).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await emulator.close();
    rmSync(state, { recursive: true, force: true });
  };

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`wrangler dev exited early: ${stderr}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
      if (response.status === 503) {
        const message = ((await response.json()) as { error?: { message?: string } }).error?.message;
        await stop();
        throw new Error(`the service's configuration is unusable: ${message}`);
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("the service's configuration")) throw error;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer /healthz within 90 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  return {
    url,
    emulatorUrl: emulator.url,
    processGroup: child.pid ?? 0,
    inspectorPort,
    async providerCalls(provider, contains) {
      const response = await fetch(
        `${emulator.url}/__calls?provider=${encodeURIComponent(provider)}&contains=${encodeURIComponent(contains)}`,
      );
      return ((await response.json()) as { count: number }).count;
    },
    stop,
  };
}
