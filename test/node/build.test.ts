/**
 * What the build must keep true: the TypeScript is strict-clean, every committed .wasm is exactly
 * what its WAT source compiles to (no hand-edited or stale binary ships), and `npm install` decides
 * every dependency's install script (npm 11.19+ skips the ones `allowScripts` does not list, and
 * says so at the end of the install).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compileWat } from "../../scripts/wat";
import { describe, expect, it } from "vitest";

describe("build", () => {
  it("type-checks the whole project with tsc --strict", () => {
    let output = "";
    try {
      execFileSync("npx", ["tsc", "--noEmit", "-p", "."], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 170_000,
      });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe("");
  }, 180_000);

  it("ships .wasm files identical to what their WAT sources compile to", async () => {
    const dir = "shared/imaging/wasm";
    const sources = readdirSync(dir).filter((f) => f.endsWith(".wat"));
    expect(sources.length).toBeGreaterThan(0);
    for (const name of sources) {
      const compiled = await compileWat(name, readFileSync(join(dir, name), "utf8"));
      const committed = readFileSync(join(dir, name.replace(/\.wat$/, ".wasm")));
      expect(Buffer.from(compiled).equals(committed), `${name} is stale: run npm run build:wasm`).toBe(true);
    }
  });

  it("lists every installed dependency that has an install script in package.json's allowScripts", () => {
    const allowed = (JSON.parse(readFileSync("package.json", "utf8")) as { allowScripts?: Record<string, boolean> })
      .allowScripts;
    expect(allowed).toBeDefined();
    const withScripts = new Set<string>();
    const walk = (modules: string) => {
      if (!existsSync(modules)) return;
      for (const entry of readdirSync(modules)) {
        if (entry.startsWith(".")) continue;
        const names = entry.startsWith("@") ? readdirSync(join(modules, entry)).map((n) => `${entry}/${n}`) : [entry];
        for (const name of names) {
          const dir = join(modules, name);
          const manifest = join(dir, "package.json");
          if (!existsSync(manifest)) continue;
          const scripts = (JSON.parse(readFileSync(manifest, "utf8")) as { scripts?: Record<string, string> }).scripts;
          // npm runs `node-gyp rebuild` for a binding.gyp without an install script of its own.
          if (scripts?.preinstall || scripts?.install || scripts?.postinstall || existsSync(join(dir, "binding.gyp")))
            withScripts.add(name);
          walk(join(dir, "node_modules"));
        }
      }
    };
    walk("node_modules");
    expect(withScripts.size).toBeGreaterThan(0);
    expect([...withScripts].filter((name) => !(name in allowed!)).sort()).toEqual([]);
    // Listed but no longer installed: a stale approval.
    expect(Object.keys(allowed!).filter((name) => !withScripts.has(name))).toEqual([]);
  });
});
