/**
 * Starts the bench's bare Worker (index.ts beside this file) under `wrangler dev`, answering
 * `payload`, or forwarding every POST to `upstream` when given.
 */
import { spawn } from "node:child_process";
import { freePort } from "../../scripts/local-stack";

export async function startBare(
  payload: string,
  upstream?: string,
  inspectorPort?: number,
): Promise<{ url: string; group: number; stop: () => void }> {
  const port = await freePort();
  const child = spawn(
    "npx",
    [
      "wrangler",
      "dev",
      "--config",
      "bench/bare-worker/wrangler.toml",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort ?? (await freePort())),
      "--var",
      `PAYLOAD:${payload}`,
      ...(upstream ? ["--var", `UPSTREAM:${upstream}`] : []),
      "--show-interactive-dev-session=false",
      "--log-level",
      "warn",
    ],
    {
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      stdio: "ignore",
      detached: true,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 360; i++) {
    try {
      if ((await fetch(url)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, group: child.pid ?? 0, stop: () => child.pid && process.kill(-child.pid, "SIGTERM") };
}
