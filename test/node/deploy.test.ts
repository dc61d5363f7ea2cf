/**
 * Deployment per environment builds offline: `wrangler deploy --dry-run --env <env>` bundles the
 * Worker with that environment's bindings and vars, and deployed environments never allow
 * anonymous access.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";

function dryRun(environment: string): { output: string; files: string[]; script: string } {
  const outdir = mkdtempSync(join(tmpdir(), `dry-run-${environment}-`));
  try {
    const output = execFileSync("npx", ["wrangler", "deploy", "--dry-run", "--env", environment, "--outdir", outdir], {
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 120_000,
    });
    return { output, files: readdirSync(outdir), script: readFileSync(join(outdir, "index.js"), "utf8") };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe("wrangler deploy --dry-run", () => {
  it.each(["production", "staging"])("builds the %s environment offline with its bindings", (environment) => {
    const { output, files } = dryRun(environment);
    expect(files).toContain("index.js");
    expect(output).toContain("env.FLIGHT (FlightDO)");
    expect(output).toContain("env.SESSIONS (SessionDO)");
    expect(output).toContain("env.LEDGER (LedgerDO)");
    expect(output).toContain("env.CACHE");
    expect(output).toContain('env.security ({"allow_anonymous":false})');
    // No warning that a top-level binding or setting is missing from the environment.
    expect(output).not.toMatch(/not inherited|Unexpected fields/);
  });

  it("gives local development its own Worker name, so a bare `wrangler deploy` never replaces a deployed one", () => {
    const nameOf = (env?: string) => unstable_readConfig({ config: "wrangler.toml", env }, { hideWarnings: true }).name;
    const names = [nameOf(), nameOf("staging"), nameOf("production")];
    expect(new Set(names).size, names.join(", ")).toBe(3);
  });

  it("ships a minified bundle under 1 MiB gzip, without eval paths, MozJPEG's glue or zod's locales (docs/benchmarks.md)", () => {
    const { output, script } = dryRun("production");
    const gzipKiB = Number(/gzip: ([\d.]+) KiB/.exec(output)?.[1]);
    expect(gzipKiB).toBeGreaterThan(100);
    expect(gzipKiB).toBeLessThan(1024);
    expect(script).not.toContain("new Function");
    expect(script).not.toContain("locateFile"); // emscripten's loader: only MozJPEG's glue has one
    // zod's locales stay out only while every file imports zod as a namespace (a German message).
    expect(script).not.toContain("ltige Eingabe");
  });
});
