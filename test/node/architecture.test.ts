/**
 * The shape rules a reader relies on (docs/architecture.md): no import loops anywhere in the
 * service's or the CLIs' code, and domain code never reaching into a runtime entry or a CLI (cli/).
 */
import { describe, expect, it } from "vitest";
import { importCycles, importGraph } from "../../scripts/import-graph";

const graph = importGraph(["shared", "workers", "deno", "cli"]);

describe("architecture", () => {
  it("has no import cycle (type-only imports included)", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("finds a cycle when there is one (the detector itself)", () => {
    const looped = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(importCycles(looped)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  it("keeps domain code free of the runtime entries and the CLIs", () => {
    const outward = [...graph].flatMap(([file, imports]) =>
      file.startsWith("shared/")
        ? imports.filter((target) => !target.startsWith("shared/")).map((target) => `${file} -> ${target}`)
        : [],
    );
    expect(outward).toEqual([]);
  });
});
