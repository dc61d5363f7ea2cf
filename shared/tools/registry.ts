/** Every tool the service offers, in the order OpenAPI and MCP list them. */
import { EvictRequest, EvictResponse } from "../eviction/evict.schema";
import { evictForSession } from "../eviction/evict.service";
import { BODY_LIMITS } from "../http/body";
import { ExtractRequest, ExtractResponse } from "../web/extract.schema";
import { webExtract } from "../web/extract.service";
import { SearchRequest, SearchResponse } from "../web/search.schema";
import { webSearch } from "../web/search.service";
import { MAX_IMAGE_BYTES, analyzeImage } from "../vision/vision.service";
import { VisionRequest, VisionResponse } from "../vision/vision.schema";
import { defineTool, type ToolContext, type ToolDefinition } from "./tool.types";

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

export const webExtractTool = defineTool({
  name: "web_extract",
  path: "/v1/web_extract",
  description:
    "Read 1..5 web pages as markdown or text. Every URL passes the safety gate (secrets, private addresses, website policy) before the shared cache; repeats within the TTL are free.",
  input: ExtractRequest,
  output: ExtractResponse,
  bodyLimit: BODY_LIMITS.default,
  mcp: true,
  async run({ deps, loaded }, input) {
    const answer = await webExtract({ ...deps, config: loaded }, input);
    return { body: answer.body, headers: { "x-cache": answer.cacheHeader } };
  },
});

const visionDeps = ({ deps, loaded }: ToolContext) => ({
  config: loaded,
  fetch: deps.fetch,
  fit: deps.fitImage,
  embeds: deps.embeds,
  dnsResolver: deps.dnsResolver,
  log: deps.log,
});

export const visionAnalyzeTool = defineTool({
  name: "vision_analyze",
  path: "/v1/vision_analyze",
  description:
    "Look at an image. Native path: returns the image fitted to the embed budget with provider-ready blocks (repeat loads of one image per session are capped). Descriptor path: returns an auxiliary model's description.",
  input: VisionRequest,
  output: VisionResponse,
  bodyLimit: BODY_LIMITS.vision,
  mcp: true,
  upload: { field: "image", maxBytes: MAX_IMAGE_BYTES, fields: VisionRequest.omit({ image: true }) },
  async run(ctx, input, upload) {
    const body = await analyzeImage(visionDeps(ctx), input, upload);
    const image = body.image as { data: string; media_type: string } | undefined;
    return { body, mcpContent: image ? [{ type: "image", data: image.data, mimeType: image.media_type }] : undefined };
  },
});

export const contextEvictTool = defineTool({
  name: "context_evict",
  path: "/v1/context/evict",
  description:
    "Retire the oldest tool images of an outbound request only when it would pass the provider's image ceilings, in batches, so the cached prompt prefix survives (strategy hermes, the default), or when the provider's price table or a cold cache makes it pay (strategy cost). User uploads are never rewritten.",
  input: EvictRequest,
  output: EvictResponse,
  bodyLimit: BODY_LIMITS.evict,
  // A client-side transformation of the client's own request: HTTP only, not an MCP tool.
  mcp: false,
  async run({ deps }, input) {
    return { body: await evictForSession(input, deps) };
  },
});

export const TOOLS: ToolDefinition<any>[] = [webSearchTool, webExtractTool, visionAnalyzeTool, contextEvictTool];
