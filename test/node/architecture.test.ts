/**
 * The shape rules a reader relies on (docs/architecture.md): no import loops anywhere in the
 * service's or the tools' code, and domain code never reaching into a runtime entry or a tool.
 */
import { describe, expect, it } from "vitest";
import { importCycles, importGraph } from "../../scripts/import-graph";

const graph = importGraph(["shared", "workers", "deno", "tools"]);

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

  it("keeps domain code free of the runtime entries and the tools", () => {
    const outward = [...graph].flatMap(([file, imports]) =>
      file.startsWith("shared/")
        ? imports.filter((target) => !target.startsWith("shared/")).map((target) => `${file} -> ${target}`)
        : [],
    );
    expect(outward).toEqual([]);
  });
});
