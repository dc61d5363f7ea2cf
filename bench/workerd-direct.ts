/**
 * A Worker on workerd without `wrangler dev`'s Node process in the request path: the bundle
 * `wrangler deploy --dry-run` builds from a wrangler.toml (the one a deploy would upload) run by
 * Miniflare, from the installed miniflare and wrangler packages, with the bindings wrangler reads
 * from that same file (`unstable_getMiniflareWorkerOptions`: vars, KV, Durable Objects,
 * compatibility date and flags), local KV and Durable Object storage in a fresh folder. A request
 * goes straight to workerd's socket, as a deployed Worker's request reaches its isolate without a
 * Node process in between.
 *
 * Where the Worker's console lines go (`logs`):
 * - "workerd": workerd writes them to its own stdout, a file (`logFile`), as a runtime writes its
 *   log stream: no Node process touches a line. Miniflare starts workerd through a two-line shell
 *   wrapper (MINIFLARE_WORKERD_PATH) that `exec`s it with stdout on the file.
 * - "node": Miniflare's own default: its Node process reads workerd's stdout through a pipe, line
 *   by line, and prints each with console.log (to a file here), the way `wrangler dev`'s Node
 *   process receives them too (without the debug-log file wrangler then appends each line to).
 *
 * Each side runs in a Node child of its own (this file with `serve`), the leader of a process
 * group with its workerd, so a bench can read the CPU of the two apart (bench/workerd-processes.ts).
 * Used by bench/web.bench.ts; not a test fixture.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../scripts/local-stack";
import { cpuMsOf } from "./workerd-processes";

export type LogSink = "workerd" | "node";

export interface DirectWorker {
  url: string;
  /** The process group: the Node child (Miniflare) and its workerd. */
  group: number;
  /** Where the Worker's log lines end up (a file; see `logs`). */
  logFile: string;
  stop(): void;
}

/**
 * Builds `config` (a wrangler.toml, relative to `cwd`) as `wrangler deploy --dry-run` does and
 * serves it on workerd through Miniflare, with `vars` over the file's own.
 */
export async function startDirect(options: {
  cwd?: string;
  config?: string;
  vars?: Record<string, string>;
  logs: LogSink;
  /** workerd's inspector (Chrome DevTools protocol) on this port, for a profile. */
  inspectorPort?: number;
  /** More `wrangler deploy` arguments, e.g. `--minify=false` for a readable profile. */
  buildArgs?: readonly string[];
}): Promise<DirectWorker> {
  const cwd = resolve(options.cwd ?? ".");
  const config = resolve(cwd, options.config ?? "wrangler.toml");
  const work = mkdtempSync(join(tmpdir(), "workerd-direct-"));
  const outdir = join(work, "dist");
  // This tree's wrangler, whichever checkout is built (a before side's links the same packages).
  const wrangler = join(dirname(fileURLToPath(import.meta.url)), "../node_modules/.bin/wrangler");
  execFileSync(
    wrangler,
    ["deploy", "--dry-run", "--config", config, "--outdir", outdir, ...(options.buildArgs ?? [])],
    {
      cwd,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const port = await freePort();
  const logFile = join(work, "worker.log");
  // wrangler's reading of the file, here: the child loads Miniflare only (a smaller heap to settle).
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  const { workerOptions } = unstable_getMiniflareWorkerOptions(config);
  const spec = { workerOptions, outdir, work, port, vars: options.vars ?? {}, logs: options.logs, logFile };
  const here = dirname(fileURLToPath(import.meta.url));
  const out = openSync(join(work, "node.log"), "a");
  const child = spawn(
    process.execPath,
    [
      // V8's memory reducer collects the startup's garbage in bursts for seconds after; a bench
      // reading this process's CPU would count them. Collected once, at once, instead.
      "--no-memory-reducer",
      "--expose-gc",
      "--import",
      "tsx",
      join(here, "workerd-direct.ts"),
      "serve",
      JSON.stringify({ ...spec, inspectorPort: options.inspectorPort }),
    ],
    { cwd: resolve(here, ".."), stdio: ["ignore", out, "inherit"], detached: true },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`workerd-direct for ${config} exited (${child.exitCode})`);
    try {
      await (await fetch(`${url}/healthz`)).arrayBuffer();
      break;
    } catch {
      if (i > 600) throw new Error(`workerd-direct for ${config} did not answer`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // Miniflare's Node process keeps working for some seconds after the first answer (a few hundred
  // ms of CPU, none of it per request): wait until it is quiet, so a bench counts requests only.
  const nodeCpu = () => cpuMsOf([child.pid!]) ?? 0;
  for (let quiet = 0, i = 0; quiet < 6 && i < 90; i++) {
    const before = nodeCpu();
    await new Promise((r) => setTimeout(r, 500));
    quiet = nodeCpu() - before < 1 ? quiet + 1 : 0;
  }
  return {
    url,
    group: child.pid ?? 0,
    logFile: options.logs === "workerd" ? logFile : join(work, "node.log"),
    stop() {
      try {
        if (child.pid) process.kill(-child.pid, "SIGTERM");
      } catch {}
      setTimeout(() => rmSync(work, { recursive: true, force: true }), 500).unref();
    },
  };
}

/** The child: Miniflare serving the built bundle until SIGTERM. */
async function serve(spec: {
  workerOptions: { bindings?: Record<string, unknown>; modulesRules?: unknown };
  outdir: string;
  work: string;
  port: number;
  vars: Record<string, string>;
  logs: LogSink;
  logFile: string;
  inspectorPort?: number;
}) {
  // The miniflare and workerd wrangler itself runs (wrangler dev's), not the newer ones the test pool uses.
  const fromWrangler = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));
  const fromMiniflare = createRequire(fromWrangler.resolve("miniflare"));
  const { Miniflare } = fromWrangler("miniflare") as {
    Miniflare: new (options: object) => { ready: Promise<URL>; dispose(): Promise<void> };
  };
  const { workerOptions } = spec;
  if (spec.logs === "workerd") {
    // The binary Miniflare would start itself.
    const workerd = (fromMiniflare("workerd") as { default: string }).default;
    const wrapper = join(spec.work, "workerd-to-file.sh");
    writeFileSync(wrapper, `#!/bin/sh\nexec '${workerd}' "$@" >>'${spec.logFile}'\n`);
    chmodSync(wrapper, 0o755);
    process.env.MINIFLARE_WORKERD_PATH = wrapper;
  }
  // The bundle's modules as wrangler wrote them: the entry, and the WebAssembly it imports.
  const modules = readdirSync(spec.outdir)
    .filter((f) => f.endsWith(".js") || f.endsWith(".wasm"))
    .map((f) => ({
      type: f.endsWith(".wasm") ? ("CompiledWasm" as const) : ("ESModule" as const),
      path: join(spec.outdir, f),
    }));
  modules.sort((a, b) => Number(b.path.endsWith("index.js")) - Number(a.path.endsWith("index.js")));
  const { modulesRules: _rules, ...bindings } = workerOptions;
  const mf = new Miniflare({
    workers: [
      {
        ...bindings,
        name: "worker",
        modules,
        modulesRoot: spec.outdir,
        bindings: { ...workerOptions.bindings, ...spec.vars },
      },
    ],
    host: "127.0.0.1",
    port: spec.port,
    inspectorPort: spec.inspectorPort,
    cf: false,
    kvPersist: join(spec.work, "kv"),
    durableObjectsPersist: join(spec.work, "do"),
  });
  await mf.ready;
  (globalThis as { gc?: () => void }).gc?.();
  process.on("SIGTERM", () => {
    void mf.dispose().finally(() => process.exit(0));
  });
}

if (process.argv[2] === "serve") await serve(JSON.parse(process.argv[3]!));
