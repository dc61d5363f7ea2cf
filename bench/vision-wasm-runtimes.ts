/**
 * Our WASM kernels and whole fits in workerd and in Node side by side, the same bundled code on
 * both: workerd runs it directly (`workerd serve` with a generated config, no wrangler, so V8 flags
 * can be given: --allow-natives-syntax for the facts below, and WASM_RUNTIMES_V8_FLAGS for an extra
 * workerd side, e.g. "--no-wasm-bounds-checks" or "--perf-prof --perf-prof-annotate-wasm" for
 * `perf record`/`perf inject --jit`), Node runs it in a child HTTP server. Per op: CPU ms a
 * repetition (Linux /proc schedstat of the side's process, every thread, less an empty request's),
 * median of ROUNDS (default 7) after 3 warm-up requests, sides interleaved per round.
 * WASM_RUNTIMES_BEFORE=<checkout>: the same sides again with that checkout's shared/ code and .wasm files.
 * WASM_RUNTIMES_DENO=1: a Deno side too (the Node side's server under Deno).
 * Prints first each side's V8 facts (the WASM trap handler: off means an explicit bounds check per
 * memory access; Node's V8 version).
 * Run: [WASM_RUNTIMES_BEFORE=/work/main] npx tsx bench/vision-wasm-runtimes.ts [op...]
 * (ops: bench/vision-wasm-runtimes/ops.ts KERNEL_OPS and FIT_OPS; all when none given; REPS=3)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { build, type Plugin } from "esbuild";
import { screenshot } from "./computer-use-session";
import { median } from "./stats";
import { makeScreenshotInputs } from "./vision-inputs";
import { FIT_OPS, KERNEL_OPS } from "./vision-wasm-runtimes/ops";
import { cpuMsOf } from "./workerd-processes";

const here = dirname(new URL(import.meta.url).pathname);
const workerd = join(dirname(createRequire(import.meta.url).resolve("workerd/package.json")), "bin", "workerd");
const WASM_FILES = ["vision.simd.wasm", "zlib.wasm", "jpeg.decode.wasm", "webp.decode.wasm"];
const rounds = Number(process.env.ROUNDS ?? 7);
const reps = Number(process.env.REPS ?? 3);
const ops = process.argv.length > 2 ? process.argv.slice(2) : [...KERNEL_OPS, ...FIT_OPS];
const extraFlags = (process.env.WASM_RUNTIMES_V8_FLAGS ?? "").split(/\s+/).filter(Boolean);

const work = mkdtempSync(join(tmpdir(), "wasm-runtimes-"));
writeFileSync(join(work, "session.png"), Buffer.from(await screenshot(16, false), "base64"));
const light = (await makeScreenshotInputs()).find(([name]) => name.includes("1920x1080 light"))!;
writeFileSync(join(work, "light.png"), light[1]);

/** esbuild: this bench's ops with `root`'s shared/ code (the checkout being measured). */
const sharedFrom = (root: string): Plugin => ({
  name: "shared-from-root",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/\.\.\/shared\// }, (args) => ({
      path: require.resolve(join(root, args.path.slice("../../".length))),
    }));
  },
});
const require = createRequire(import.meta.url);
async function bundle(root: string, entry: string, out: string, platform: "node" | "neutral") {
  await build({
    entryPoints: [join(here, "vision-wasm-runtimes", entry)],
    bundle: true,
    format: "esm",
    platform,
    outfile: out,
    external: ["*.wasm", "*.png", "natives.js"],
    plugins: [sharedFrom(root)],
    logLevel: "warning",
  });
}

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

interface Side {
  label: string;
  child: ChildProcess;
  port: number;
}

async function started(label: string, child: ChildProcess, port: number): Promise<Side> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/`)).ok) return { label, child, port };
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error(`${label} did not start`);
}

const NATIVES = `export function v8Facts(module) {
  const k = new WebAssembly.Instance(module, {}).exports;
  return { trapHandler: %IsWasmTrapHandlerEnabled(), hfilterOptimised: %IsTurboFanFunction(k.hfilter) };
}
`;

async function workerdSide(label: string, root: string, dir: string, flags: string[]): Promise<Side> {
  const port = await freePort();
  // Embedded files are named relative to the config, so the side's directory holds copies.
  for (const f of WASM_FILES) copyFileSync(join(root, "shared/imaging/wasm", f), join(dir, f));
  for (const f of ["session.png", "light.png"]) copyFileSync(join(work, f), join(dir, f));
  const modules = [
    `(name = "worker.js", esModule = embed "worker.js")`,
    `(name = "natives.js", esModule = embed "natives.js")`,
    ...WASM_FILES.map((f) => `(name = "${f}", wasm = embed "${f}")`),
    ...["session.png", "light.png"].map((f) => `(name = "${f}", data = embed "${f}")`),
  ];
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
  v8Flags = [${["--allow-natives-syntax", ...flags].map((f) => JSON.stringify(f)).join(", ")}],
);
const w :Workerd.Worker = (
  modules = [ ${modules.join(", ")} ],
  compatibilityDate = "2026-04-01",
);
`;
  const file = join(dir, `config-${port}.capnp`);
  writeFileSync(file, config);
  const child = spawn(workerd, ["serve", file], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  return started(label, child, port);
}

/** The Node side, or with `deno` the same server under Deno (V8 15 like workerd, and no WASM trap handler either). */
async function serverSide(label: string, root: string, dir: string, deno = false): Promise<Side> {
  const port = await freePort();
  const server = join(dir, "node-server.mjs");
  const [command, args] = deno
    ? [join(here, "../node_modules/.bin/deno"), ["run", "-A", "--v8-flags=--allow-natives-syntax", server]]
    : [process.execPath, ["--allow-natives-syntax", server]];
  const child = spawn(command, args, {
    env: { ...process.env, PORT: String(port), WASM_DIR: join(root, "shared/imaging/wasm"), PNG_DIR: work },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return started(label, child, port);
}

const cpuMs = (pid: number) => cpuMsOf([pid])!;

async function request(side: Side, query: string): Promise<{ ms: number; body: string }> {
  const before = cpuMs(side.child.pid!);
  const response = await fetch(`http://127.0.0.1:${side.port}/?${query}`);
  const body = await response.text();
  if (!response.ok) throw new Error(`${side.label}: ${response.status} ${body}`);
  return { ms: cpuMs(side.child.pid!) - before, body };
}

const roots: Array<[string, string]> = [["this tree", resolve(here, "..")]];
if (process.env.WASM_RUNTIMES_BEFORE) roots.unshift(["before", resolve(process.env.WASM_RUNTIMES_BEFORE)]);
const sides: Side[] = [];
try {
  for (const [label, root] of roots) {
    const dir = mkdtempSync(join(work, "side-"));
    writeFileSync(join(dir, "natives.js"), NATIVES);
    await bundle(root, "worker.ts", join(dir, "worker.js"), "neutral");
    await bundle(root, "node-server.ts", join(dir, "node-server.mjs"), "node");
    sides.push(await workerdSide(`workerd, ${label}`, root, dir, []));
    if (extraFlags.length)
      sides.push(await workerdSide(`workerd ${extraFlags.join(" ")}, ${label}`, root, dir, extraFlags));
    sides.push(await serverSide(`Node, ${label}`, root, dir));
    if (process.env.WASM_RUNTIMES_DENO) sides.push(await serverSide(`Deno, ${label}`, root, dir, true));
  }
  for (const side of sides) {
    await request(side, "op=hfilter&reps=1");
    console.log(`${side.label}: ${(await request(side, "op=v8")).body}`);
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(" ");
  console.log(`\nload average at the start ${load()}; CPU ms a repetition (${reps} a request), medians of ${rounds}`);
  console.log(`| op | ${sides.map((s) => s.label).join(" | ")} |\n|---|${sides.map(() => "---:").join("|")}|`);
  for (const op of ops) {
    const query = `op=${op}&reps=${reps}`;
    for (const side of sides) for (let i = 0; i < 3; i++) await request(side, query);
    const got = sides.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++)
      for (const [i, side] of sides.entries()) {
        const run = await request(side, query);
        const empty = await request(side, "");
        got[i]!.push((run.ms - empty.ms) / reps);
      }
    console.log(`| ${op} | ${got.map((g) => median(g).toFixed(2)).join(" | ")} |`);
  }
  console.log(`load average at the end ${load()}`);
} finally {
  for (const side of sides) side.child.kill();
  rmSync(work, { recursive: true, force: true });
}
