/**
 * Which rooms of shared/ may import which (docs/architecture.md, "Rooms"). A room is a folder of
 * shared/ (`web/`, `proxy/`) or one of its loose files (`ports.ts`). LAYERS lists them from the
 * ground up: a file imports its own room or a room of a lower layer, never one of its own layer or
 * above, even for a type. UPWARD lists the arrows that still run up, each with what removes it: a
 * new upward arrow fails here, and so does a listed one that is gone (take it off the list).
 */
import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { importGraph, roomOf, upwardArrows } from "../../scripts/import-graph";

const LAYERS: readonly (readonly string[])[] = [
  ["deadline", "frozen", "hash", "nearest", "recent", "text-map"], // leaves: import nothing in shared/
  ["bytes"],
  ["http"], // errors, bodies, auth, validation: what every route and provider speaks
  ["media"], // an image's type and size from its first bytes, base64
  ["llm"], // the LLM wire formats, the LLM provider specs and the model table
  ["ports"], // every interface domain code needs from a runtime
  ["log", "safety"],
  ["config"],
  ["stats", "imaging", "eviction"],
  ["web"],
  ["vision"],
  ["proxy"],
  ["tools"],
  ["mcp"],
  ["app"], // the Hono app, its home page, request log and OpenAPI document
];

/**
 * Arrows that still run up, as `file -> file`. ports.ts names data types of the rooms whose
 * values cross its interfaces (the configuration, a web job, the stats answer, an address class);
 * the configuration schema derives its web provider keys from their catalog (the LLM ones come from
 * shared/llm/, a layer below it).
 */
const UPWARD: ReadonlySet<string> = new Set([
  // AppDeps and RequestContext carry the configuration: they belong above config/ (a context file of their own).
  "shared/ports.ts -> shared/config/config.load.ts",
  "shared/ports.ts -> shared/config/config.schema.ts",
  // SingleFlight runs a web Job: its types belong below ports (or SingleFlight in web/).
  "shared/ports.ts -> shared/web/job.types.ts",
  // LedgerStore answers a StatsResponse; LedgerEntry names a LedgerTool.
  "shared/ports.ts -> shared/stats/stats.schema.ts",
  "shared/ports.ts -> shared/stats/counters.ts",
  // A DNS answer's address class (the SSRF gate's ranges).
  "shared/ports.ts -> shared/safety/ip.ts",
  // The configuration derives its web provider keys from their catalog.
  "shared/config/config.schema.ts -> shared/web/providers/providers.catalog.ts",
  // proxy.forward_headers is checked against the headers never forwarded, every provider's key
  // headers among them (the list, with the proxy's own headers, could go down to shared/llm/).
  "shared/config/config.schema.ts -> shared/proxy/request-policy.ts",
]);

const graph = importGraph(["shared"]);

describe("rooms", () => {
  it("places every room of shared/ in one layer", () => {
    const rooms = new Set([...graph.keys()].map(roomOf));
    const placed = LAYERS.flat();
    expect([...rooms].filter((room) => !placed.includes(room)).sort()).toEqual([]);
    expect(placed.filter((room) => !rooms.has(room))).toEqual([]);
    expect(new Set(placed).size).toBe(placed.length);
  });

  it("has no import running up a layer but the listed ones", () => {
    const found = upwardArrows(graph, LAYERS);
    expect(found.filter((arrow) => !UPWARD.has(arrow))).toEqual([]);
    // A listed arrow that is gone comes off the list, so the list only shrinks.
    expect([...UPWARD].filter((arrow) => !found.includes(arrow))).toEqual([]);
  });

  it("gives no two files of shared/ the same name (a name says what a file is, once)", () => {
    const byName = new Map<string, string[]>();
    for (const file of readdirSync("shared", { recursive: true, encoding: "utf8" })) {
      if (!statSync(join("shared", file)).isFile()) continue;
      byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
    }
    expect([...byName.values()].filter((files) => files.length > 1)).toEqual([]);
  });

  it("finds an arrow that runs up or across a layer (the check itself)", () => {
    const layers = [["low"], ["mid", "side"], ["high"]];
    const toy = new Map([
      ["shared/high/a.ts", ["shared/low/b.ts", "shared/high/c.ts"]],
      ["shared/low/b.ts", ["shared/mid/d.ts"]],
      ["shared/mid/d.ts", ["shared/side.ts", "shared/low/b.ts"]],
    ]);
    expect(upwardArrows(toy, layers)).toEqual([
      "shared/low/b.ts -> shared/mid/d.ts",
      "shared/mid/d.ts -> shared/side.ts",
    ]);
  });
});
