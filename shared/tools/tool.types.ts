/**
 * A tool is one operation offered both as an HTTP route (`POST /v1/<name>`) and as an MCP tool,
 * from one zod input schema: the same validation, the same service call, the same JSON schema in
 * OpenAPI and in `tools/list`.
 */
import type { z } from "zod";
import type { AppDeps } from "../app";
import type { LoadedConfig } from "../config/config.load";

export interface ToolContext {
  deps: AppDeps;
  loaded: LoadedConfig;
  requestId: string;
}

/** An MCP content block (text or image). */
export type McpContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

export interface ToolAnswer {
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Extra MCP content after the JSON text (e.g. the fitted image itself). */
  mcpContent?: McpContent[];
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  path: string;
  description: string;
  input: S;
  /** Response schema for OpenAPI. */
  output?: z.ZodType;
  /** Request body limit in bytes (api.md). */
  bodyLimit: number;
  /** Offered on /mcp too. */
  mcp: boolean;
  /**
   * Multipart uploads (vision): the file field's name and the schema of the other form fields.
   * `run` then receives the file's bytes as `upload`.
   */
  upload?: { field: string; maxBytes: number; fields: z.ZodType };
  run(ctx: ToolContext, input: z.output<S>, upload?: Uint8Array): Promise<ToolAnswer>;
}

/** Keeps the schema's type attached to `run`'s input. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition<S> => tool;
