/** Every tool the service offers, in the order OpenAPI and MCP list them. */
import { BODY_LIMITS } from "../http/body";
import { SearchRequest, SearchResponse } from "../web/search.schema";
import { webSearch } from "../web/search.service";
import { defineTool, type ToolDefinition } from "./tool.types";

export const webSearchTool = defineTool({
  name: "web_search",
  path: "/v1/web_search",
  description: "Search the web. Repeats within the cache TTL and identical concurrent searches are answered from one provider call.",
  input: SearchRequest,
  output: SearchResponse,
  bodyLimit: BODY_LIMITS.default,
  mcp: true,
  async run({ deps, loaded }, input) {
    const body = await webSearch({ ...deps, config: loaded }, input);
    return { body, headers: { "x-cache": body.cache.toUpperCase() } };
  },
});

export const TOOLS: ToolDefinition<any>[] = [webSearchTool];
