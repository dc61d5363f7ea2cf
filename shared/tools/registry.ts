/** Every tool the service offers, in the order OpenAPI and MCP list them. */
import { EvictRequest, EvictResponse } from "../eviction/evict.schema";
import { evictForSession } from "../eviction/evict.service";
import { callerSession } from "../http/auth";
import { BODY_LIMITS } from "../http/body";
import { ExtractRequest, ExtractResponse } from "../web/extract.schema";
import { webExtract } from "../web/extract.service";
import { SearchRequest, SearchResponse } from "../web/search.schema";
import { webSearch } from "../web/search.service";
import { cacheControlFields } from "../web/freshness.schema";
import { PurgeRequest, PurgeResponse } from "../web/purge.schema";
import { purgeCache } from "../web/purge.service";
import { MAX_IMAGE_BYTES, analyzeImage } from "../vision/vision.service";
import { blockImageBase64 } from "../vision/vision.path";
import * as z from "zod";
import { VisionDescriptorResponse, VisionNativeResponse, VisionRequest, VisionResponse } from "../vision/vision.schema";
import { defineTool, type McpToolResult, type ToolDefinition } from "./tool.types";

/** `Cache-Control` request directives as web_search / web_extract body fields (which win). */
const CACHE_CONTROL = {
  names: ["cache-control"],
  toFields: cacheControlFields,
  describe: {
    "Cache-Control":
      "no-cache (= max_age 0), max-age=N (= max_age N), no-store (= store false); a body field wins; unknown or malformed directives are ignored",
  },
};

export const webSearchTool = defineTool({
  name: "web_search",
  path: "/v1/web_search",
  description:
    "Search the web. Repeats within the cache TTL and identical concurrent searches are answered from one provider call.",
  input: SearchRequest,
  output: SearchResponse,
  errorStatuses: [502, 503, 504],
  cacheHeader: "HIT, MISS, COALESCED or BYPASS: the body's `cache` in upper case",
  bodyLimit: BODY_LIMITS.default,
  mcp: true,
  requestHeaders: CACHE_CONTROL,
  sharedInput: true,
  responseHeaders: { Age: "The body's `age`: whole seconds since the provider answered" },
  async run(ctx, input) {
    const body = await webSearch(ctx, input);
    return {
      body,
      headers: { "x-cache": body.cache.toUpperCase(), age: String(body.age) },
      log: { provider: body.provider },
    };
  },
});

export const webExtractTool = defineTool({
  name: "web_extract",
  path: "/v1/web_extract",
  description:
    "Read 1..5 web pages as markdown or text. Every URL passes the safety gate (secrets, private addresses, website policy) before the shared cache; repeats within the TTL are free.",
  input: ExtractRequest,
  output: ExtractResponse,
  errorStatuses: [422, 503],
  cacheHeader: "HIT=n,MISS=n: how many URLs were answered without and with a provider payment",
  bodyLimit: BODY_LIMITS.default,
  mcp: true,
  requestHeaders: CACHE_CONTROL,
  async run(ctx, input) {
    const answer = await webExtract(ctx, input);
    return { body: answer.body, headers: { "x-cache": answer.cacheHeader } };
  },
});

/** vision_analyze over MCP: the native answer without its blocks (the bytes travel as the image block). */
const VisionMcpResult = z.union([VisionNativeResponse.omit({ content: true }), VisionDescriptorResponse]);

/** Longest text block next to an image: a summary the model reads, never the bytes again. */
const MCP_SUMMARY_MAX_CHARS = 1500;

function visionForMcp(body: Record<string, unknown>): McpToolResult {
  if (body.path !== "native") return { structured: body, text: JSON.stringify(body) };
  const { content, ...rest } = body as VisionNativeResponse;
  const data = content.map(blockImageBase64).find((found) => found !== null);
  if (data === undefined || data === null) throw new Error("vision answer without an image block");
  const { image } = rest;
  const cap =
    rest.embed_count === null
      ? "not counted: no session"
      : rest.embed_cap === null
        ? "no cap"
        : `cap ${rest.embed_cap}`;
  const text = `Image ${image.width}x${image.height} ${image.media_type} (${image.bytes} bytes; ${image.data_url_bytes} as a data URL) in the image block. ${rest.note} Loads of this image in this session: ${rest.embed_count ?? "-"} (${cap}).`;
  return {
    structured: rest,
    text: text.slice(0, MCP_SUMMARY_MAX_CHARS),
    images: [{ type: "image", data, mimeType: image.media_type }],
  };
}

export const visionAnalyzeTool = defineTool({
  name: "vision_analyze",
  path: "/v1/vision_analyze",
  description:
    "Look at an image, fitted to the embed byte budget, with repeat loads of one image per session capped. Native path: returns the image fitted to the embed budget with provider-ready blocks (repeat loads of one image per session are capped). Descriptor path: returns an auxiliary model's description.",
  input: VisionRequest,
  output: VisionResponse,
  errorStatuses: [403, 409, 422, 502, 503, 504],
  bodyLimit: BODY_LIMITS.vision,
  mcp: true,
  upload: {
    field: "image",
    maxBytes: MAX_IMAGE_BYTES,
    fields: VisionRequest.omit({ image: true }),
    jsonFields: ["region", "model"],
  },
  sessionArgument: "session_id",
  mcpOutput: VisionMcpResult,
  toMcp: visionForMcp,
  async run(ctx, input, upload) {
    return { body: await analyzeImage(ctx, input, upload) };
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
  async run({ ports, config, caller }, input) {
    // The session's memory is this caller's: another token under the same id never reads or resets it.
    const session_id =
      input.session_id === undefined ? undefined : await callerSession(await caller(), input.session_id);
    const body = await evictForSession({ ...input, session_id }, ports, { priceOverrides: config.pricing.models });
    ports.ledger.record({
      tool: "evict",
      model: input.strategy,
      counts: { requests: 1, images_retired: body.stats.retired_blocks },
      at: ports.clock(),
    });
    return { body };
  },
});

export const cachePurgeTool = defineTool({
  name: "cache_purge",
  path: "/v1/cache/purge",
  description:
    "Drop cached web_search answers and web_extract reads everywhere they are kept; a call already fetching one still stores its answer.",
  input: PurgeRequest,
  output: PurgeResponse,
  bodyLimit: BODY_LIMITS.default,
  errorStatuses: [503],
  mcp: false,
  async run(ctx, input) {
    return { body: await purgeCache(ctx, input) };
  },
});

export const TOOLS: ToolDefinition[] = [
  webSearchTool,
  webExtractTool,
  visionAnalyzeTool,
  contextEvictTool,
  cachePurgeTool,
];
/** The tools `/mcp` offers (context/evict is HTTP only). */
export const MCP_TOOLS: ToolDefinition[] = TOOLS.filter((tool) => tool.mcp);
