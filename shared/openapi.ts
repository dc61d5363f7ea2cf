/** The OpenAPI 3.1 document, generated from the same zod schemas as the routes and MCP tools. */
import { z } from "zod";
import { inputJsonSchema } from "./mcp/mcp";
import type { ToolDefinition } from "./tools/tool.types";

const ERROR_SCHEMA = {
  type: "object",
  required: ["success", "error"],
  properties: {
    success: { const: false },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "string" }, message: { type: "string" }, details: {} },
    },
  },
};

const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });

export function openApiDocument(tools: ToolDefinition[], version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {
    "/healthz": { get: { summary: "Liveness", security: [], responses: { "200": { description: "The service is up" } } } },
    "/v1/config": { get: { summary: "The effective configuration (secrets shown as set/null)", responses: { "200": { description: "Configuration" }, "401": errorResponse("Unauthorized") } } },
    "/mcp": { post: { summary: "Model Context Protocol (Streamable HTTP, JSON-RPC 2.0)", responses: { "200": { description: "JSON-RPC reply" }, "202": { description: "Notification accepted" } } } },
  };
  for (const tool of tools) {
    const output = tool.output ? (z.toJSONSchema(tool.output, { io: "output", unrepresentable: "any" }) as Record<string, unknown>) : { type: "object" };
    delete output.$schema;
    paths[tool.path] = {
      post: {
        operationId: tool.name,
        summary: tool.description,
        requestBody: { required: true, content: { "application/json": { schema: inputJsonSchema(tool) } } },
        responses: {
          "200": { description: "Success", content: { "application/json": { schema: output } } },
          "400": errorResponse("Invalid request"),
          "401": errorResponse("Unauthorized"),
          "413": errorResponse("Body too large"),
          "415": errorResponse("Not JSON"),
          "502": errorResponse("Provider error"),
          "503": errorResponse("No provider"),
          "504": errorResponse("Provider timeout"),
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Edge agent tools", version, description: "Cached web search/extract, budgeted vision and cache-friendly image eviction for AI agents." },
    components: { schemas: { Error: ERROR_SCHEMA }, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
