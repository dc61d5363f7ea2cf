/**
 * What the build must keep true: the TypeScript is strict-clean, and every committed .wasm is
 * exactly what its WAT source compiles to (no hand-edited or stale binary ships).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
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
    const dir = "shared/vision/wasm";
    const sources = readdirSync(dir).filter((f) => f.endsWith(".wat"));
    expect(sources.length).toBeGreaterThan(0);
    for (const name of sources) {
      const compiled = await compileWat(name, readFileSync(join(dir, name), "utf8"));
      const committed = readFileSync(join(dir, name.replace(/\.wat$/, ".wasm")));
      expect(Buffer.from(compiled).equals(committed), `${name} is stale: run npm run build:wasm`).toBe(true);
    }
  });
});
