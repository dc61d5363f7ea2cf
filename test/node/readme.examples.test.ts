/**
 * The README's examples, as written, offline (issue 47, item 6): every `curl` of its sh blocks runs
 * against `npm run dev` started with the lines the emulator's CLI prints for `.dev.vars`, the
 * README's ports (8787, 9100) being this run's. Each must answer 2xx with no error body.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offlineDevVars, type RunningEmulator, startEmulator } from "../emulator/server";
import { type NpmRunDev, startNpmRunDev } from "./npm-run-dev";

const run = promisify(execFile);

/** Each `curl …` command of the README's sh blocks, continuation lines and quoted newlines included. */
function readmeCurls(): string[] {
  const readme = readFileSync("README.md", "utf8");
  const commands: string[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let current: string | null = null;
    for (const line of block[1]!.split("\n")) {
      if (current !== null) {
        current += `\n${line}`;
      } else if (line.startsWith("curl ")) {
        current = line;
      } else continue;
      const openQuote = (current.match(/'/g) ?? []).length % 2 === 1;
      if (!openQuote && !current.endsWith("\\")) {
        commands.push(current);
        current = null;
      }
    }
  }
  return commands;
}

let emulator: RunningEmulator;
let dev: NpmRunDev;
let home: string;

beforeAll(async () => {
  emulator = await startEmulator();
  dev = await startNpmRunDev(offlineDevVars(emulator.url));
  // curl's own settings for these runs: quiet, errors shown, the status after the body.
  home = mkdtempSync(join(tmpdir(), "readme-curl-"));
  writeFileSync(join(home, ".curlrc"), 'silent\nshow-error\nwrite-out = "\\n%{http_code}"\n');
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await emulator?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

async function runExample(command: string): Promise<{ status: number; body: string }> {
  const service = new URL(dev.url).host;
  const emulated = new URL(emulator.url).host;
  const script = command.replaceAll("127.0.0.1:8787", service).replaceAll("127.0.0.1:9100", emulated);
  const { stdout } = await run("sh", ["-c", script], { env: { ...process.env, HOME: home }, timeout: 60_000 });
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

describe("the README's examples, offline", () => {
  const curls = readmeCurls();

  it("finds every curl of the README", () => {
    expect(curls.length).toBeGreaterThanOrEqual(17);
  });

  it.each(curls.map((command) => [command.split("\n")[0]!.slice(0, 100), command]))(
    "%s",
    async (_, command) => {
      const { status, body } = await runExample(command);
      expect(status, body.slice(0, 500)).toBeGreaterThanOrEqual(200);
      expect(status, body.slice(0, 500)).toBeLessThan(300);
      if (body.startsWith("{")) expect(JSON.parse(body).success, body.slice(0, 500)).not.toBe(false);
    },
    90_000,
  );

  it("reaches the native path by URL and the descriptor path as the README says", async () => {
    const byUrl = curls.find((command) => command.includes("/pages/image.png"));
    const described = curls.find((command) => command.includes("mistral"));
    const native = JSON.parse((await runExample(byUrl!)).body);
    expect(native).toMatchObject({ path: "native", original: { width: 2880, height: 1800 } });
    const descriptor = JSON.parse((await runExample(described!)).body);
    expect(descriptor).toMatchObject({ path: "descriptor", model: "emu-vision" });
  }, 90_000);
});
