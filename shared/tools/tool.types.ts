/**
 * A tool is one operation offered both as an HTTP route (`POST /v1/<name>`) and as an MCP tool,
 * from one zod input schema: the same validation, the same service call, the same JSON schema in
 * OpenAPI and in `tools/list`.
 */
import type * as z from "zod";
import type { RequestContext, RequestLogFields } from "../ports";

/** What a tool runs with: the ports, the configuration and its secrets, the request id. */
export type ToolContext = RequestContext;

/** An MCP image content block: the only way image bytes travel in an MCP result. */
export type McpImage = { type: "image"; data: string; mimeType: string };

/** What one answer becomes in an MCP `tools/call` result. */
export interface McpToolResult {
  /** `structuredContent`, as the tool's `mcpOutput` (else `output`) schema describes it. */
  structured: Record<string, unknown>;
  /** The text block: the JSON of `structured`, or a short summary next to an image. */
  text: string;
  images?: McpImage[];
}

export interface ToolAnswer {
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Fields for the request's log line (the provider that answered). */
  log?: RequestLogFields;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  path: string;
  description: string;
  input: S;
  /** Response schema for OpenAPI. */
  output?: z.ZodType;
  /** Error statuses this tool returns besides every route's 400/401/413/415/500 (for OpenAPI). */
  errorStatuses?: number[];
  /** What the `X-Cache` header of a 200 says, when the tool sets one (for OpenAPI). */
  cacheHeader?: string;
  /** Request body limit in bytes (api.md). */
  bodyLimit: number;
  /** Offered on /mcp too. */
  mcp: boolean;
  /** Body fields an HTTP request's headers give (`Cache-Control`); the body's own fields win. */
  requestHeaders?: {
    /** The headers `toFields` reads (lower case). */
    names: readonly string[];
    toFields(headers: Headers): Record<string, unknown>;
    describe: Record<string, string>;
  };
  /**
   * `run` never changes its input, so a small body's validated input may be kept and shared by
   * the repeats of that body (shared/tools/input-memo.ts): it is deep-frozen.
   */
  sharedInput?: boolean;
  /** Response headers of a 200 besides `X-Cache`, with what they say (for OpenAPI). */
  responseHeaders?: Record<string, string>;
  /**
   * How an answer reads over MCP when the HTTP body does not fit a model's context as it is (the
   * image bytes of vision). Default: `structured` is the body, `text` its JSON.
   */
  toMcp?: (body: Record<string, unknown>) => McpToolResult;
  /** Schema of `toMcp`'s `structured` (MCP `outputSchema`); default `output`. */
  mcpOutput?: z.ZodType;
  /** The argument that defaults to the client's `Mcp-Session-Id` when a tools/call leaves it out. */
  sessionArgument?: string;
  /**
   * Multipart uploads (vision): the file field's name and the schema of the other form fields.
   * `run` then receives the file's bytes as `upload`.
   */
  /** `jsonFields`: the text fields that hold JSON (parsed); every other text field stays text. */
  upload?: { field: string; maxBytes: number; fields: z.ZodType; jsonFields: readonly string[] };
  run(ctx: ToolContext, input: z.output<S>, upload?: Uint8Array): Promise<ToolAnswer>;
}

/** Keeps the schema's type attached to `run`'s input. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> => tool;
