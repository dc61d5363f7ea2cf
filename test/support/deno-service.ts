/** Starts deno/main.ts as a real process (the way `npm run dev:deno` does) and waits for /healthz. */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { freePort } from "../../scripts/local-stack";
import { emulatorVars, type RunningEmulator, startEmulator } from "../emulator/server";

export interface DenoService {
  url: string;
  process: ChildProcess;
  /** The last few KiB of its stdout and stderr. */
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, "../..");

/** The permissions the `dev:deno` script grants. */
export const DENO_RUN = ["run", "--allow-net", "--allow-read", "--allow-write", "--allow-env"];

export async function startDeno(options: {
  env: Record<string, string>;
  args?: string[];
  cwd?: string;
  command?: string[];
  port?: number;
  healthPath?: string;
  /** Run deno/main.ts through test/deno/flight-probe.ts, which shows its flight's joiners (denoFlightJoiners). */
  flightProbe?: boolean;
}): Promise<DenoService> {
  const port = options.port ?? (await freePort());
  const command = options.command ?? [
    resolve(ROOT, "node_modules/.bin/deno"),
    ...DENO_RUN,
    resolve(ROOT, options.flightProbe ? "test/deno/flight-probe.ts" : "deno/main.ts"),
    ...(options.args ?? []),
  ];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, PORT: String(port), DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const keep = (chunk: unknown) => (output = (output + String(chunk)).slice(-6000));
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const service: DenoService = {
    url: `http://127.0.0.1:${port}`,
    process: child,
    output: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null && child.pid) process.kill(-child.pid, signal);
      await exited;
      // A command run through npm exits before its Deno, which writes the ledger's last counts on a
      // stop (up to 2 s) while still listening: a service started next on the same port would reach
      // it. Wait until the whole process group is gone (at most 10 s, then kill what is left).
      if (child.pid) await groupGone(child.pid);
    },
  };
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${service.url}${options.healthPath ?? "/healthz"}`)).ok) return service;
    } catch {}
    if (i > 360 || child.exitCode !== null) {
      await service.stop();
      throw new Error(`deno did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A Deno service in front of its own loopback emulator. */
export interface DenoOnEmulator {
  emulator: RunningEmulator;
  deno: DenoService;
  /** Stops the service, then the emulator. */
  stop(): Promise<void>;
}

/**
 * Starts the emulator, then deno/main.ts pointed at it (every provider, the DNS resolver, the
 * auxiliary model), Deno KV in memory unless `env` names a file; `env` is added last.
 */
export async function startDenoOnEmulator(
  env: Record<string, string> = {},
  options: { flightProbe?: boolean } = {},
): Promise<DenoOnEmulator> {
  const emulator = await startEmulator();
  try {
    const deno = await startDeno({
      env: { ...emulatorVars(emulator.url), DENO_KV_PATH: ":memory:", ...env },
      ...options,
    });
    return {
      emulator,
      deno,
      async stop() {
        if (process.env.DEBUG_DENO) console.log(deno.output());
        await deno.stop();
        await emulator.close();
      },
    };
  } catch (error) {
    await emulator.close();
    throw error;
  }
}

/**
 * How many callers of the flight key `key` wait on the one paying, summed over `services` (each
 * started with `flightProbe`): in a process's own flight, or on another process's Deno KV lease.
 */
export async function denoFlightJoiners(services: DenoService[], key: string): Promise<number> {
  let joiners = 0;
  for (const service of services) {
    const response = await fetch(`${service.url}/__test/flight-joiners?key=${encodeURIComponent(key)}`);
    joiners += ((await response.json()) as { joiners: number }).joiners;
  }
  return joiners;
}

/** Resolves when no process of the group `pid` leads is left; kills the rest after 10 s. */
async function groupGone(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const started = Date.now(); alive(); await new Promise((r) => setTimeout(r, 50)))
    if (Date.now() - started > 10_000) {
      process.kill(-pid, "SIGKILL");
      return;
    }
}
