/**
 * The MCP server: the official SDK's server speaks the protocol (lifecycle, JSON-RPC,
 * capabilities); we answer `tools/list` and `tools/call` from TOOLS. Each tool's own zod schema validates its
 * arguments (`parseRequest`, as on the HTTP route), so both fronts refuse the same input with the
 * same error body, and `tools/list` shows the same portable JSON Schemas as OpenAPI.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import * as z from "zod";
import { deepFreeze } from "../frozen";
import { AppError } from "../http/errors";
import { parseRequest } from "../http/validate";
import { toObjectJsonSchema } from "../tools/json-schema";
import type { ToolContext, ToolDefinition } from "../tools/tool.types";

/**
 * tools/call as the handler is registered: the method alone. The SDK's server checks the params
 * against CallToolRequestSchema itself and answers a mismatch with -32602 Invalid params; registered
 * with the full schema, its first parse failed first and answered -32603 Internal error for a
 * caller's mistake (`arguments: [1, 2]`, a numeric `name`, no `params`).
 */
const TOOLS_CALL = z.object({ method: z.literal("tools/call"), params: z.unknown().optional() });

const INSTRUCTIONS = "Cached web search and extract, budgeted vision. Repeats are answered from a shared cache.";

/**
 * A fresh server for one HTTP request (Workers are stateless: nothing is kept between requests).
 * @param sessionId the client's `Mcp-Session-Id` (or the one being issued), the default of each
 *   tool's `sessionArgument`
 * @param serverVersion this build's version, as `initialize` reports it
 */
export function createMcpServer(
  ctx: ToolContext,
  tools: ToolDefinition[],
  sessionId: string | null,
  serverVersion: string,
): McpServer {
  const server = new McpServer(
    { name: "edge-agent-tools", version: serverVersion },
    // The SDK's default validator (Ajv) compiles schemas with `new Function`, which workerd forbids.
    { instructions: INSTRUCTIONS, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  // A stateless endpoint never sends tools/list_changed.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map(mcpToolListing) }));
  // Our own tools/call: an unknown name is the JSON-RPC error -32602 (the SDK's McpServer would
  // answer it as a tool result); a known tool validates its arguments with its own zod schema.
  server.server.setRequestHandler(TOOLS_CALL, (raw) => {
    const request = CallToolRequestSchema.parse(raw); // already checked by the SDK (see TOOLS_CALL)
    const tool = tools.find((candidate) => candidate.name === request.params.name);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${request.params.name.slice(0, 100)}. tools/list names the tools: ${tools.map((t) => t.name).join(", ")}.`,
      );
    }
    return callTool(ctx, tool, request.params.arguments ?? {}, sessionId);
  });
  return server;
}

/** Each tool's listing, built on its first `tools/list` (the schemas never change while the code runs). */
const listings = new WeakMap<ToolDefinition, Tool>();

/** A tool as `tools/list` shows it, built once per tool and frozen so no caller can change it. */
export function mcpToolListing(tool: ToolDefinition): Tool {
  let listing = listings.get(tool);
  if (!listing) listings.set(tool, (listing = deepFreeze(buildMcpToolListing(tool))));
  return listing;
}

/** A tool as `tools/list` shows it: portable input and output schemas from the zod schemas. */
export function buildMcpToolListing(tool: ToolDefinition): Tool {
  const inputSchema = toObjectJsonSchema(tool.input, "input");
  if (tool.sessionArgument && Array.isArray(inputSchema.required)) {
    inputSchema.required = inputSchema.required.filter((name) => name !== tool.sessionArgument);
  }
  const output = tool.mcpOutput ?? tool.output;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: inputSchema as Tool["inputSchema"],
    ...(output ? { outputSchema: toObjectJsonSchema(output, "output") as Tool["outputSchema"] } : {}),
    annotations: { readOnlyHint: true, openWorldHint: true },
  };
}

async function callTool(
  ctx: ToolContext,
  tool: ToolDefinition,
  args: Record<string, unknown>,
  sessionId: string | null,
): Promise<CallToolResult> {
  const session = tool.sessionArgument;
  const given = session && sessionId !== null && args[session] === undefined ? { ...args, [session]: sessionId } : args;
  try {
    const answer = await tool.run(ctx, parseRequest(tool.input, given));
    const result = tool.toMcp
      ? tool.toMcp(answer.body)
      : { structured: answer.body, text: JSON.stringify(answer.body) };
    return {
      content: [{ type: "text", text: result.text }, ...(result.images ?? [])],
      structuredContent: result.structured,
    };
  } catch (error) {
    const appError =
      error instanceof AppError
        ? error
        : new AppError(500, "internal_error", "The tool failed unexpectedly; try again.", { cause: error });
    // Server-side failures are logged as the HTTP routes log them (request-log.ts): code and private
    // cause, never sent; a warning when expected (a provider down), an error only for a real bug.
    if (appError.status >= 500) {
      ctx.ports.log[appError.code === "internal_error" ? "error" : "warn"]("mcp_tool_failed", {
        tool: tool.name,
        request_id: ctx.requestId,
        code: appError.code,
        cause: appError.privateCause === undefined ? undefined : String(appError.privateCause),
      });
    }
    // A tool failure is a result the model can read, not a protocol error (MCP spec).
    return { content: [{ type: "text", text: JSON.stringify(appError.toBody()) }], isError: true };
  }
}
