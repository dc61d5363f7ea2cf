/**
 * The OpenAPI 3.1 document, generated from the same zod schemas as the routes and MCP tools: a
 * field added to a route's schema appears here with no edit to this file.
 */
import { Config, SECRET_NAMES } from "../config/config.schema";
import { BODY_LIMITS, formatBytes } from "../http/body";
import { DEFAULT_PROTOCOL_VERSION, MCP_PROTOCOL_VERSIONS, SESSION_ID } from "../mcp/mcp.http";
import { SessionsResponse, StatsQuery, StatsResponse } from "../stats/stats.schema";
import { toJsonSchema } from "../tools/json-schema";
import type { ToolDefinition } from "../tools/tool.types";

type Json = Record<string, unknown>;

/** Set by the repository's owner; shown because API consumers (and linters) ask for it. */
const LICENSE = { name: "Proprietary", identifier: "LicenseRef-Proprietary" };

const ERROR_SCHEMA: Json = {
  type: "object",
  description: "Every error of every route has this shape (docs/api.md).",
  required: ["success", "error"],
  properties: {
    success: { const: false },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", description: "Stable snake_case code, e.g. invalid_request" },
        message: { type: "string", description: "What was wrong and what to do" },
        details: { description: "For invalid_request: [{path, message}] per bad field" },
      },
    },
  },
};

const RPC_ID = { type: ["string", "integer"] };
const JSONRPC = { const: "2.0" };
const RPC_ERROR_OBJECT = {
  type: "object",
  required: ["code", "message"],
  properties: { code: { type: "integer" }, message: { type: "string" }, data: {} },
};

const SCHEMAS: Record<string, Json> = {
  Error: ERROR_SCHEMA,
  JsonRpcMessage: {
    type: "object",
    description:
      "One JSON-RPC 2.0 message: a request, a notification (no id), or a response to a server request. Batches only under protocol revision 2025-03-26.",
    required: ["jsonrpc"],
    properties: {
      jsonrpc: JSONRPC,
      id: RPC_ID,
      method: { type: "string" },
      params: { type: "object" },
      result: { type: "object" },
      error: RPC_ERROR_OBJECT,
    },
  },
  JsonRpcResponse: {
    type: "object",
    required: ["jsonrpc", "id"],
    properties: { jsonrpc: JSONRPC, id: RPC_ID, result: { type: "object" }, error: RPC_ERROR_OBJECT },
  },
  JsonRpcError: {
    type: "object",
    description: "A transport-level failure: no message was processed, so the id is null.",
    required: ["jsonrpc", "id", "error"],
    properties: { jsonrpc: JSONRPC, id: { type: "null" }, error: RPC_ERROR_OBJECT },
  },
};

const HEADERS: Record<string, Json> = {
  RequestId: {
    description: "The caller's X-Request-Id if it was 1..128 of [A-Za-z0-9._:-], else a new one",
    schema: { type: "string" },
  },
};

const json = (schema: Json) => ({ "application/json": { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const requestIdHeader = { "X-Request-Id": { $ref: "#/components/headers/RequestId" } };

/** Why each status is returned, shared by every route that can return it. */
const ERROR_STATUSES: Record<number, string> = {
  400: "Invalid request: schema errors (details lists each bad field), invalid_json, or an invalid_image",
  401: "unauthorized: API_TOKENS is set and no valid bearer token was sent, or anonymous access is off",
  403: "forbidden: a web page on an origin not allowed (security.allowed_origins) while the service takes calls without a token; blocked_private_address or blocked_by_policy: the image URL is refused by the safety gate",
  409: "embed_cap_reached: this image was already loaded into context the allowed number of times in this session",
  413: "payload_too_large (body over the route's limit) or image_too_large",
  415: "unsupported_media_type: the body is not JSON (or multipart where accepted), or the image format is not supported",
  422: "secret_in_url: a URL carries what looks like a credential; nothing was fetched or cached",
  500: "config_error: the service's configuration is unusable (the message names the key)",
  502: "provider_error or fetch_failed: the upstream failed (never echoed)",
  503: "no_provider: the configured provider has no key, or no auxiliary vision model is configured; dns_unavailable: the DNS-over-HTTPS resolver (security.dns_resolver_url) could not be used, so an image URL's host could not be checked",
  504: "provider_timeout: the provider did not answer in time",
};

/** Statuses every authenticated JSON route can return (403: a page on a foreign origin while anonymous calls are taken). */
const COMMON_STATUSES = [400, 401, 403, 413, 415, 500];

const errorResponses = (statuses: number[]) =>
  Object.fromEntries(
    [...new Set(statuses)]
      .sort()
      .map((status) => [
        String(status),
        { description: ERROR_STATUSES[status]!, headers: requestIdHeader, content: json(ref("Error")) },
      ]),
  );

/** A GET of the savings ledger over a `window` (/v1/stats and its sessions): one shape, its answer apart. */
const ledgerRead = (operationId: string, summary: string, description: string, answered: string, answer: Json) => ({
  get: {
    operationId,
    summary,
    description,
    parameters: [
      {
        name: "window",
        in: "query",
        required: false,
        schema: (toJsonSchema(StatsQuery, "input").properties as Json).window,
        description:
          "1h (this clock hour so far), 24h (default), 7d or 30d: whole clock hours ending with the current one",
      },
    ],
    responses: {
      "200": { description: answered, headers: requestIdHeader, content: json(answer) },
      ...errorResponses([400, 401, 500]),
      "503": {
        description: "stats_unavailable: the ledger's store could not be read",
        headers: requestIdHeader,
        content: json(ref("Error")),
      },
    },
  },
});

const rpcFailure = (description: string) => ({
  description,
  headers: requestIdHeader,
  content: json(ref("JsonRpcError")),
});

/** The /v1/config answer: every key of the config schema (with its description) and the secrets. */
function configSchema(): Json {
  const sections = toJsonSchema(Config, "output");
  const vision = (sections.properties as Record<string, Json>).vision as Json;
  vision.properties = {
    ...(vision.properties as Json),
    max_calls_per_image_rule: {
      type: "string",
      description: "vision.max_calls_per_image in words: the cap each caller gets",
    },
  };
  vision.required = [...((vision.required as string[]) ?? []), "max_calls_per_image_rule"];
  const secrets = {
    type: "object",
    properties: Object.fromEntries(SECRET_NAMES.map((name) => [name, { enum: ["set", null] }])),
  };
  const learned = {
    type: "object",
    description:
      "Tokens per image this isolate (or process) learned from billed usage, per model the table does not know (docs/eviction.md, 'Learned image cost')",
    additionalProperties: {
      type: "object",
      properties: { tokens_per_image: { type: "integer" }, samples: { type: "integer" } },
      required: ["tokens_per_image", "samples"],
    },
  };
  return {
    ...sections,
    properties: { ...(sections.properties as Json), secrets, learned_image_tokens: learned },
    required: [...((sections.required as string[]) ?? []), "secrets", "learned_image_tokens"],
  };
}

function toolOperation(tool: ToolDefinition): Json {
  const requestContent: Json = json(toJsonSchema(tool.input, "input"));
  if (tool.upload) {
    const fields = toJsonSchema(tool.upload.fields, "input");
    const properties = fields.properties as Record<string, Json>;
    const structured = Object.keys(properties).filter(
      (name) => properties[name]!.type === "array" || properties[name]!.type === "object",
    );
    requestContent["multipart/form-data"] = {
      schema: {
        ...fields,
        properties: {
          [tool.upload.field]: {
            type: "string",
            format: "binary",
            description: `The file, up to ${Math.round(tool.upload.maxBytes / 1024 / 1024)} MiB`,
          },
          ...properties,
        },
        required: [tool.upload.field, ...((fields.required as string[]) ?? [])],
      },
      // Arrays and objects (region, model) are sent as JSON text in their form field.
      encoding: Object.fromEntries(structured.map((name) => [name, { contentType: "application/json" }])),
    };
  }
  const okHeaders: Json = { ...requestIdHeader };
  if (tool.cacheHeader) okHeaders["X-Cache"] = { description: tool.cacheHeader, schema: { type: "string" } };
  for (const [name, description] of Object.entries(tool.responseHeaders ?? {}))
    okHeaders[name] = { description, schema: { type: "string" } };
  const parameters = Object.entries(tool.requestHeaders?.describe ?? {}).map(([name, description]) => ({
    name,
    in: "header",
    required: false,
    description,
    schema: { type: "string" },
  }));
  return {
    operationId: tool.name,
    ...(parameters.length > 0 ? { parameters } : {}),
    summary: tool.description.split(". ")[0]!.replace(/\.$/, ""),
    description: tool.description,
    requestBody: { required: true, content: requestContent },
    responses: {
      "200": {
        description: "Success",
        headers: okHeaders,
        content: json(tool.output ? toJsonSchema(tool.output, "output") : { type: "object" }),
      },
      ...errorResponses([...COMMON_STATUSES, ...(tool.errorStatuses ?? [])]),
    },
  };
}

/** `/healthz`: liveness, and the 503 of an unusable configuration. */
function healthzPath(): Json {
  return {
    get: {
      operationId: "healthz",
      summary: "Liveness (always open); 503 when the configuration is unusable",
      security: [],
      responses: {
        "200": {
          description: "The service is up",
          headers: requestIdHeader,
          content: json({
            type: "object",
            required: ["ok", "version", "runtime"],
            properties: { ok: { const: true }, version: { type: "string" }, runtime: { enum: ["workerd", "deno"] } },
          }),
        },
        "503": {
          description:
            "config_error: a configuration key is unusable; the message names it, its value, and where to fix it",
          headers: requestIdHeader,
          content: json({
            allOf: [
              ref("Error"),
              {
                type: "object",
                required: ["ok", "version", "runtime"],
                properties: {
                  ok: { const: false },
                  version: { type: "string" },
                  runtime: { enum: ["workerd", "deno"] },
                },
              },
            ],
          }),
        },
      },
    },
  };
}

/** `/v1/config`: the effective configuration. */
function configPath(): Json {
  return {
    get: {
      operationId: "get_config",
      summary: "The effective configuration, secrets shown as set or null",
      responses: {
        "200": {
          description: "Configuration after defaults, tables and flat variables",
          headers: requestIdHeader,
          content: json(configSchema()),
        },
        ...errorResponses([401, 500]),
      },
    },
  };
}

/** The ledger's reads: `/v1/stats` and `/v1/stats/sessions`. */
function statsPaths(): Json {
  return {
    "/v1/stats": ledgerRead(
      "get_stats",
      "The savings ledger over a window: counts, tokens and money per tool, provider and model",
      "Every key is present, zeros included. Money: web tools' saved_usd is the provider calls avoided (hits + coalesced) times the provider's price per call; llm saved_usd is cost_without_cache_usd − cost_usd. Buckets are hourly, kept 35 days (docs/stats.md).",
      "The ledger over the window",
      toJsonSchema(StatsResponse, "output"),
    ),
    "/v1/stats/sessions": ledgerRead(
      "get_stats_sessions",
      "The window's proxied sessions: requests, tokens, images, billed, as sent and saved per session",
      "Sessions are keyed by the caller's X-Session-Id (cut to 128 characters; the caller's text) or, without one, the derived X-Edge-Session. The most saved first, at most 200: the rest are summed as \"(other)\", as are the sessions past 200 in one hour. cost_as_sent_usd is what the provider would have billed for the requests exactly as the agent sent them; saved_usd = cost_as_sent_usd − cost_usd (docs/stats.md).",
      "The sessions of the window",
      toJsonSchema(SessionsResponse, "output"),
    ),
  };
}

/** `/dashboard`: the savings page. */
function dashboardPath(): Json {
  return {
    get: {
      operationId: "dashboard",
      summary: "The savings dashboard (HTML; reads /v1/stats with the token it asks for)",
      security: [],
      responses: {
        "200": {
          description: "The page",
          headers: requestIdHeader,
          content: { "text/html": { schema: { type: "string" } } },
        },
      },
    },
  };
}

/** `/mcp`: the Model Context Protocol endpoint and the tools it lists. */
function mcpPath(tools: ToolDefinition[]): Json {
  return {
    post: {
      operationId: "mcp",
      summary: "Model Context Protocol (Streamable HTTP, JSON responses)",
      description: `JSON-RPC 2.0 over POST; protocol revisions ${MCP_PROTOCOL_VERSIONS.join(", ")}. Tools: ${tools
        .filter((t) => t.mcp)
        .map((t) => t.name)
        .join(
          ", ",
        )}. Every POST sends Accept: application/json, text/event-stream (else 406). An Mcp-Session-Id is issued on initialize and is the default session_id of vision_analyze.`,
      parameters: [
        {
          name: "MCP-Protocol-Version",
          in: "header",
          required: false,
          schema: { enum: [...MCP_PROTOCOL_VERSIONS] },
          description: `The negotiated revision (${DEFAULT_PROTOCOL_VERSION} when absent); another value is a 400`,
        },
        {
          name: "Mcp-Session-Id",
          in: "header",
          required: false,
          schema: { type: "string", pattern: SESSION_ID.source },
          description: "The id issued on initialize",
        },
      ],
      requestBody: {
        required: true,
        content: json({
          oneOf: [ref("JsonRpcMessage"), { type: "array", items: ref("JsonRpcMessage"), minItems: 1 }],
        }),
      },
      responses: {
        "200": {
          description: "The JSON-RPC response to the request posted (initialize also sets Mcp-Session-Id)",
          headers: {
            ...requestIdHeader,
            "Mcp-Session-Id": { description: "Issued on initialize", schema: { type: "string" } },
          },
          content: json(ref("JsonRpcResponse")),
        },
        "202": { description: "A notification or a response was accepted; no body", headers: requestIdHeader },
        "400": rpcFailure(
          "Parse error (-32700), an invalid message or a batch under a revision without batches (-32600), an unsupported MCP-Protocol-Version or a malformed Mcp-Session-Id",
        ),
        ...errorResponses([401]),
        "403": rpcFailure("The Origin is neither this service's nor in security.allowed_origins"),
        "406": rpcFailure("Accept does not list application/json and text/event-stream"),
        "413": rpcFailure(`The body is over ${formatBytes(BODY_LIMITS.vision)}`),
        "415": rpcFailure("The body is not application/json"),
        ...errorResponses([500]),
      },
    },
  };
}

/** `/`: the routes and the docs, as JSON or a page. */
function indexPath(): Json {
  return {
    get: {
      operationId: "index",
      summary: "The routes and the docs: JSON, or an HTML page for a browser (Accept: text/html)",
      security: [],
      responses: {
        "200": {
          description: "Every route with one line on what it does",
          headers: requestIdHeader,
          content: {
            ...json({
              type: "object",
              required: ["name", "version", "runtime", "routes", "docs"],
              properties: {
                name: { type: "string" },
                version: { type: "string" },
                runtime: { enum: ["workerd", "deno"] },
                routes: {
                  type: "array",
                  items: {
                    type: "object",
                    required: ["method", "path", "what"],
                    properties: {
                      method: { enum: ["GET", "POST", "ANY"] },
                      path: { type: "string" },
                      what: { type: "string" },
                    },
                  },
                },
                docs: { type: "object", additionalProperties: { type: "string" } },
              },
            }),
            "text/html": { schema: { type: "string" } },
          },
        },
      },
    },
  };
}

/** `/openapi.json`: this document. */
function openApiPath(): Json {
  return {
    get: {
      operationId: "openapi",
      summary: "The OpenAPI 3.1 description of every route of this build",
      security: [],
      responses: {
        "200": { description: "OpenAPI 3.1", headers: requestIdHeader, content: json({ type: "object" }) },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of this build: the service's own routes, then one POST per tool.
 * @param serverUrl the origin the document was requested from, so "Try it" reaches this service
 */
export function openApiDocument(tools: ToolDefinition[], version: string, serverUrl: string): Json {
  const paths: Json = {
    "/healthz": healthzPath(),
    "/v1/config": configPath(),
    ...statsPaths(),
    "/dashboard": dashboardPath(),
    "/mcp": mcpPath(tools),
    "/": indexPath(),
    "/openapi.json": openApiPath(),
  };
  for (const tool of tools) paths[tool.path] = { post: toolOperation(tool) };
  return {
    openapi: "3.1.0",
    info: {
      title: "Edge agent tools",
      version,
      description: "Cached web search/extract, budgeted vision and cache-friendly image eviction for AI agents.",
      license: LICENSE,
    },
    servers: [{ url: serverUrl, description: "The service that served this document" }],
    components: {
      schemas: SCHEMAS,
      headers: HEADERS,
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "One of the API_TOKENS" } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
