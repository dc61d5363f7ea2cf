/**
 * `npm run dev` as a newcomer runs it, for tests that read what it prints or call it as the README
 * does: started with the given variables on free ports (its own state folder), its output kept,
 * with a wait for a line to appear (an event, never a sleep).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/local-stack";

export interface NpmRunDev {
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves once the output has a line matching `pattern`; rejects after `ms`, with the output. */
  outputLine(pattern: RegExp, ms?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startNpmRunDev(vars: Record<string, string>): Promise<NpmRunDev> {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "edge-tools-npm-run-dev-"));
  const args = ["run", "dev", "--", "--ip", "127.0.0.1", "--port", String(port)];
  args.push("--inspector-port", String(await freePort()), "--persist-to", state);
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
  // As a newcomer runs it: no CLOUDFLARE_CF_FETCH_ENABLED of their own, and not NODE_ENV=test
  // (vitest's, under which miniflare skips the Request.cf fetch by itself).
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true" };
  delete env.CLOUDFLARE_CF_FETCH_ENABLED;
  delete env.NODE_ENV;
  const child: ChildProcess = spawn("npm", args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  /** Checks waiting for a line; each returns true (and leaves) once its line is there. */
  const waiters = new Set<() => boolean>();
  for (const stream of [child.stdout, child.stderr])
    stream?.on("data", (chunk) => {
      output += String(chunk);
      for (const check of waiters) if (check()) waiters.delete(check);
    });

  const outputLine = (pattern: RegExp, ms = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line ${pattern} within ${ms} ms:\n${output}`)), ms);
      const check = () => {
        if (!pattern.test(output)) return false;
        clearTimeout(timer);
        resolve();
        return true;
      };
      if (!check()) waiters.add(check);
    });

  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      await exited;
    }
    rmSync(state, { recursive: true, force: true });
  };

  try {
    await outputLine(/Ready on/, 90_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, output: () => output, outputLine, stop };
}
