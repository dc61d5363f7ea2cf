/**
 * The MCP endpoint (Streamable HTTP, JSON responses): JSON-RPC 2.0 over `POST /mcp`, offering the
 * same tools as the HTTP routes with JSON schemas generated from the same zod schemas. Stateless:
 * no session id is needed, so any edge location can answer any message.
 */
import { z } from "zod";
import { AppError } from "../http/errors";
import { jsonResponse } from "../http/respond";
import { parseRequest } from "../http/validate";
import type { McpContent, ToolContext, ToolDefinition } from "../tools/tool.types";

export const MCP_PROTOCOL_VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05"] as const;

interface RpcRequest {
  jsonrpc: "2.0";
  id?: string | number | null;
  method: string;
  params?: Record<string, unknown>;
}

type RpcReply = { jsonrpc: "2.0"; id: string | number | null } & ({ result: unknown } | { error: { code: number; message: string; data?: unknown } });

const rpcError = (id: RpcRequest["id"], code: number, message: string, data?: unknown): RpcReply => ({
  jsonrpc: "2.0",
  id: id ?? null,
  error: data === undefined ? { code, message } : { code, message, data },
});

/** JSON Schema of a tool's input, as MCP `tools/list` and OpenAPI show it. */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/**
 * Answers one JSON-RPC message or a batch. Notifications get 202 with no body.
 * @example await handleMcp(ctx, tools, { jsonrpc: "2.0", id: 1, method: "tools/list" })
 */
export async function handleMcp(ctx: ToolContext, tools: ToolDefinition[], payload: unknown): Promise<Response> {
  const messages = Array.isArray(payload) ? payload : [payload];
  if (messages.length === 0) return jsonResponse(rpcError(null, -32600, "Empty batch"));
  const replies: RpcReply[] = [];
  for (const message of messages) {
    const reply = await answer(ctx, tools.filter((t) => t.mcp), message);
    if (reply) replies.push(reply);
  }
  if (replies.length === 0) return new Response(null, { status: 202 });
  return jsonResponse(Array.isArray(payload) ? replies : replies[0]);
}

async function answer(ctx: ToolContext, tools: ToolDefinition[], message: unknown): Promise<RpcReply | null> {
  if (!isRpcRequest(message)) return rpcError(null, -32600, "Invalid JSON-RPC request: expected {jsonrpc: \"2.0\", method, id?}");
  const { id, method, params = {} } = message;
  const isNotification = id === undefined;
  if (isNotification) return null;
  switch (method) {
    case "initialize": {
      const asked = typeof params.protocolVersion === "string" ? params.protocolVersion : "";
      const protocolVersion = (MCP_PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : MCP_PROTOCOL_VERSIONS[0];
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "edge-agent-tools", version: ctx.deps.version },
          instructions: "Cached web search and extract, budgeted vision. Repeats are answered from a shared cache.",
        },
      };
    }
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "tools/list":
      return {
        jsonrpc: "2.0",
        id,
        result: { tools: tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: inputJsonSchema(tool) })) },
      };
    case "tools/call": {
      const tool = tools.find((t) => t.name === params.name);
      if (!tool) return rpcError(id, -32602, `Unknown tool: ${String(params.name).slice(0, 80)}. Call tools/list for the tools.`);
      try {
        const input = parseRequest(tool.input, params.arguments ?? {});
        const result = await tool.run(ctx, input);
        const content: McpContent[] = [{ type: "text", text: JSON.stringify(result.body) }, ...(result.mcpContent ?? [])];
        return { jsonrpc: "2.0", id, result: { content, structuredContent: result.body, isError: false } };
      } catch (error) {
        const appError = error instanceof AppError ? error : new AppError(500, "internal_error", "The tool failed unexpectedly; try again.", { cause: error });
        if (!(error instanceof AppError)) ctx.deps.log.error("mcp_tool_failed", { tool: tool.name, request_id: ctx.requestId, cause: String(error) });
        // Tool failures are results the model can read, not protocol errors (MCP spec).
        const body = appError.toBody();
        return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError: true } };
      }
    }
    default:
      return rpcError(id, -32601, `Method not found: ${method.slice(0, 80)}`);
  }
}

function isRpcRequest(value: unknown): value is RpcRequest {
  if (value === null || typeof value !== "object") return false;
  const m = value as Record<string, unknown>;
  const idOk = m.id === undefined || m.id === null || typeof m.id === "string" || typeof m.id === "number";
  const paramsOk = m.params === undefined || (typeof m.params === "object" && m.params !== null);
  return m.jsonrpc === "2.0" && typeof m.method === "string" && idOk && paramsOk;
}
