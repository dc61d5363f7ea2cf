/** `tools/list`'s listings are built once per tool, equal to a fresh build, and cannot be changed by a caller. */
import { describe, expect, it } from "vitest";
import { buildMcpToolListing, mcpToolListing } from "../../shared/mcp/mcp.server";
import { MCP_TOOLS } from "../../shared/tools/registry";

describe("MCP tool listings", () => {
  it("are built once: every tools/list gets the same object, equal to a fresh build from the zod schemas", () => {
    for (const tool of MCP_TOOLS) {
      const first = mcpToolListing(tool);
      expect(mcpToolListing(tool), tool.name).toBe(first);
      expect(first, tool.name).toEqual(buildMcpToolListing(tool));
    }
    expect(MCP_TOOLS.map(mcpToolListing).map((t) => t.name)).toEqual(["web_search", "web_extract", "vision_analyze"]);
  });

  it("list max_age and store in web_search's and web_extract's input schemas, described", () => {
    for (const name of ["web_search", "web_extract"]) {
      const properties = mcpToolListing(MCP_TOOLS.find((tool) => tool.name === name)!).inputSchema.properties as Record<
        string,
        { type: string; description: string }
      >;
      expect([properties.max_age?.type, properties.store?.type], name).toEqual(["integer", "boolean"]);
      expect(properties.max_age?.description, name).toMatch(/seconds/);
      expect(properties.store?.description, name).toMatch(/neither read from nor written to the cache/);
    }
  });

  it("are frozen, so a caller cannot change what the next tools/list shows", () => {
    const vision = mcpToolListing(MCP_TOOLS.find((tool) => tool.name === "vision_analyze")!);
    expect(() => (vision.inputSchema.required as string[]).push("session_id")).toThrow(TypeError);
    expect(() => ((vision.inputSchema.properties as any).region.maxItems = 5)).toThrow(TypeError);
    expect(mcpToolListing(MCP_TOOLS[2]!).inputSchema.required).toEqual(["image"]);
  });
});
