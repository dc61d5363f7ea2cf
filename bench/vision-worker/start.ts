/**
 * Starts the bench Worker (bench/vision-worker) in workerd with `wrangler dev`, on free ports of its
 * own (its inspector too, so parallel benches do not stop each other), for the vision benches.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { workerdCpuMs } from "../workerd-processes";

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the bench Worker in workerd and resolves its base URL once it answers. `cpuMs()`: the CPU
 * time its workerd processes have used so far, both of them, so a header-only request's CPU is the
 * upload's share to subtract (undefined off Linux). `root`: the checkout whose Worker it runs (this
 * one unless told; bench/vision-before-after.ts starts another's beside it). `group`: the process
 * group of its workerd processes (bench/workerd-processes.ts). `inspectorPort`: wrangler's inspector
 * for the Worker (bench/vision-workerd-profile.ts).
 */
export async function startWorker(
  root = ".",
): Promise<{ url: string; stop: () => void; cpuMs: () => number | undefined; group: number; inspectorPort: number }> {
  const port = await freePort();
  const inspectorPort = await freePort();
  const child = spawn(
    "npx",
    [
      "wrangler",
      "dev",
      "--config",
      "bench/vision-worker/wrangler.toml",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    },
  );
  let log = "";
  child.stderr!.on("data", (d: Buffer) => {
    log += d.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      /* already gone */
    }
  };
  for (let i = 0; i < 120; i++) {
    await new Promise((r) => setTimeout(r, 500));
    if (child.exitCode !== null) break;
    try {
      if ((await fetch(url)).status === 405)
        return { url, stop, cpuMs: () => workerdCpuMs(child.pid!), group: child.pid!, inspectorPort };
    } catch {
      /* not up yet */
    }
  }
  stop();
  throw new Error(`wrangler dev did not start:\n${log}`);
}
