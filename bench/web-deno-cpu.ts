/**
 * CPU per web_search cache hit on Deno, side by side: each side is a deno/main.ts (of this checkout
 * or of another) on its own Deno KV file, or the bare Deno.serve route (bench/bare-deno); they
 * answer BLOCKS blocks of BLOCK sequential hits, taking turns block by block, and each block's CPU
 * (every thread of the process, Linux /proc schedstat) is divided by its hits. Prints the median
 * and least block per side, and its p50 latency: a difference of a few µs between two checkouts
 * shows here where the latency bench's milliseconds are noise.
 * Run: SIDES=<dir>,<dir>,bare npx tsx bench/web-deno-cpu.ts   (default SIDES=.,bare; BLOCK=250, BLOCKS=20)
 * A side `<dir>:NAME=value` runs it with that variable set (e.g. `.:LEDGER_MODE=off`); a side given
 * API_TOKENS is sent its first token.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { emulatorVars, startLocalStack } from "../scripts/local-stack";
import { DENO_RUN, type DenoService, startDeno } from "../test/support/deno-service";
import { median, ms } from "./stats";
import { cpuMsOf } from "./workerd-processes";

/** CPU ms every thread of `pid` has used so far (Linux). */
const cpuMs = (pid: number): number => cpuMsOf([pid]) ?? Number.NaN;

const BLOCK = Number(process.env.BLOCK ?? 250);
const BLOCKS = Number(process.env.BLOCKS ?? 20);
const WARM_UP = 500;
const SIDES = (process.env.SIDES ?? ".,bare").split(",");

const search = (base: string, token?: string) => () =>
  fetch(`${base}/v1/web_search`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query: "cpu hit" }),
  });

async function main() {
  const stack = await startLocalStack();
  const started: DenoService[] = [];
  try {
    const sides: Array<{ name: string; service: DenoService; request: () => Promise<Response> }> = [];
    let payload = "";
    for (const side of SIDES) {
      if (side === "bare") continue;
      const [dir, ...vars] = side.split(":");
      const env = {
        ...emulatorVars(stack.emulatorUrl),
        DENO_KV_PATH: join(mkdtempSync(join(tmpdir(), "bench-deno-kv-")), "cache.sqlite3"),
        SECURITY_ALLOW_ANONYMOUS: "true",
        WEB_CACHE_TTL_MINUTES: "60",
        ...Object.fromEntries(vars.map((v) => v.split("=") as [string, string])),
      };
      const service = await startDeno({
        env,
        command: ["node_modules/.bin/deno", ...DENO_RUN, `${resolve(dir!)}/deno/main.ts`],
      });
      started.push(service);
      // A side given API_TOKENS sends its first token.
      const token = (env as Record<string, string>).API_TOKENS?.split(",")[0];
      payload = await (await search(service.url, token)()).text();
      sides.push({ name: side, service, request: search(service.url, token) });
    }
    if (SIDES.includes("bare")) {
      const service = await startDeno({
        env: { PAYLOAD: payload.replace('"cache":"miss"', '"cache":"hit"') },
        command: ["node_modules/.bin/deno", "run", "--allow-net", "--allow-env", "bench/bare-deno/main.ts"],
        healthPath: "/",
      });
      started.push(service);
      sides.splice(SIDES.indexOf("bare"), 0, {
        name: "bare Deno.serve",
        service,
        request: () => fetch(service.url, { method: "POST", body: "{}" }),
      });
    }
    const once = async (request: () => Promise<Response>) => {
      const start = performance.now();
      const response = await request();
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      return performance.now() - start;
    };
    for (const side of sides) for (let i = 0; i < WARM_UP; i++) await once(side.request);
    const cpu = sides.map(() => [] as number[]);
    const times = sides.map(() => [] as number[]);
    for (let b = 0; b < BLOCKS; b++)
      for (let k = 0; k < sides.length; k++) {
        const i = (b + k) % sides.length;
        const side = sides[i]!;
        const before = cpuMs(side.service.process.pid!);
        for (let n = 0; n < BLOCK; n++) times[i]!.push(await once(side.request));
        cpu[i]!.push((cpuMs(side.service.process.pid!) - before) / BLOCK);
      }
    console.log(`${BLOCKS} blocks of ${BLOCK} sequential hits a side, taking turns; CPU of the side's process per hit`);
    console.log("| side | CPU ms / hit, median block | least block | p50 ms |");
    console.log("|---|---|---|---|");
    sides.forEach((side, i) =>
      console.log(
        `| ${side.name} | ${(median(cpu[i]!)).toFixed(3)} | ${Math.min(...cpu[i]!).toFixed(3)} | ${ms(median(times[i]!))} |`,
      ),
    );
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
