/**
 * `POST /mcp`: the Streamable HTTP transport's MUSTs in front of the SDK's web-standard transport.
 * Stateless: every request gets a fresh server and transport, so any isolate answers any message.
 * An `Mcp-Session-Id` is still issued on initialize; a well-formed id the client sends back is
 * accepted without a server-side lookup (there is no session memory to look in) and is the
 * default `session_id` of vision_analyze, whose repeat cap lives in the session's Durable Object.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { BODY_LIMITS, isJsonContentType, readJsonValue } from "../http/body";
import { AppError } from "../http/errors";
import { originAllowed } from "../safety/origin";
import { JSON_TYPE } from "../http/respond";
import type { ToolContext, ToolDefinition } from "../tools/tool.types";
import { createMcpServer } from "./mcp.server";

/** Revisions this endpoint speaks, newest first; a client asking for another is offered the newest. */
export const MCP_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
/** Assumed when a client sends no `MCP-Protocol-Version` (transport spec, 2025-06-18). */
export const DEFAULT_PROTOCOL_VERSION = "2025-03-26";
/** The revision that removed JSON-RPC batching. */
const BATCHES_REMOVED_IN = "2025-06-18";
/** Session ids: visible ASCII only (transport spec), as long as a `session_id` may be. */
export const SESSION_ID = /^[\x21-\x7E]{1,256}$/;

/** A transport-level failure: an HTTP status with a JSON-RPC error body (no id: none is known). */
function rpcFailure(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), {
    status,
    headers: { "content-type": JSON_TYPE },
  });
}

/**
 * The DNS-rebinding defence: a request with an `Origin` other than the service's own or one of
 * `security.allowed_origins` is a 403 (`originAllowed`: its own origin counts under a name only
 * when a token is needed). Requests without `Origin` are not from browsers and pass.
 */
export function mcpOriginRefusal(
  request: Request,
  allowedOrigins: readonly string[],
  anonymous: boolean,
): Response | null {
  const origin = request.headers.get("origin");
  if (origin === null || originAllowed(origin, request, allowedOrigins, anonymous)) return null;
  return rpcFailure(
    403,
    -32000,
    `Origin ${origin.slice(0, 200)} may not call /mcp; an operator can allow it in security.allowed_origins.`,
  );
}

/**
 * CORS for the origins of `security.allowed_origins` (a browser client such as the Inspector's web
 * UI): the preflight is answered before auth, and the session and request ids are readable.
 */
export const MCP_CORS = {
  allowMethods: ["POST"],
  allowHeaders: [
    "content-type",
    "accept",
    "authorization",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
    "x-request-id",
  ],
  exposeHeaders: ["mcp-session-id", "x-request-id"],
  maxAge: 600,
};

interface RpcMessage {
  id?: unknown;
  method?: unknown;
  params?: { protocolVersion?: unknown } & Record<string, unknown>;
}

/**
 * Answers one POST with the SDK's transport after the checks it must pass first: `Accept`, JSON
 * content type, the body within its limit and parseable (else -32700), the protocol version (400
 * when unsupported), the session id's form, and no batch under a revision without batches.
 */
export async function handleMcpPost(
  request: Request,
  ctx: ToolContext,
  tools: ToolDefinition[],
  serverVersion: string,
): Promise<Response> {
  // The transport checks Accept and Content-Type too, but it runs after we read the body: check first.
  const accept = request.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return rpcFailure(406, -32000, "Not Acceptable: send Accept: application/json, text/event-stream.");
  }
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return rpcFailure(
      415,
      -32000,
      "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json.",
    );
  }
  const headerVersion = request.headers.get("mcp-protocol-version");
  if (headerVersion !== null && !(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(headerVersion)) {
    return rpcFailure(
      400,
      -32000,
      `Bad Request: unsupported MCP-Protocol-Version ${headerVersion.slice(0, 40)}; this server speaks ${MCP_PROTOCOL_VERSIONS.join(", ")}.`,
    );
  }
  const givenSession = request.headers.get("mcp-session-id");
  if (givenSession !== null && !SESSION_ID.test(givenSession)) {
    return rpcFailure(400, -32000, "Bad Request: Mcp-Session-Id must be 1..256 visible ASCII characters.");
  }

  let payload: unknown;
  try {
    // Content-Type was checked above, with the transport's message: read and parse only.
    payload = await readJsonValue(request, BODY_LIMITS.vision);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const code = error.code === "invalid_json" ? -32700 : error.status === 400 ? -32600 : -32000;
    return rpcFailure(error.status, code, error.message);
  }

  const messages: unknown[] = Array.isArray(payload) ? payload : [payload];
  const initialize = messages.find((m): m is RpcMessage => isObject(m) && m.method === "initialize");
  const askedVersion =
    initialize && typeof initialize.params?.protocolVersion === "string" ? initialize.params.protocolVersion : null;
  const version = headerVersion ?? askedVersion ?? DEFAULT_PROTOCOL_VERSION;
  if (Array.isArray(payload) && (payload.length === 0 || version >= BATCHES_REMOVED_IN)) {
    const why =
      payload.length === 0
        ? "an empty batch is not a JSON-RPC message"
        : `JSON-RPC batches were removed in MCP ${BATCHES_REMOVED_IN}`;
    return rpcFailure(400, -32600, `Invalid Request: ${why}; send one message per POST.`);
  }
  if (messages.some((m) => isObject(m) && "method" in m && "id" in m && m.id === null)) {
    // JSON-RPC allows a null id only in a response to a request whose id could not be read.
    return rpcFailure(
      400,
      -32600,
      "Invalid Request: a request's id must be a string or a number, not null; leave id out to send a notification.",
    );
  }
  if (initialize && askedVersion !== null && !(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(askedVersion)) {
    // The SDK would echo any version it knows (2024-11-05 too); offer our newest instead.
    initialize.params = { ...initialize.params, protocolVersion: MCP_PROTOCOL_VERSIONS[0] };
  }

  const sessionId = givenSession ?? (initialize ? crypto.randomUUID() : null);
  const server = createMcpServer(ctx, tools, sessionId, serverVersion);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    let response = await transport.handleRequest(request, { parsedBody: payload });
    if (Array.isArray(payload) && response.status === 200) response = await asBatchAnswer(response);
    if (!initialize || !sessionId || response.status !== 200) return response;
    const headers = new Headers(response.headers);
    headers.set("mcp-session-id", sessionId);
    return new Response(response.body, { status: response.status, headers });
  } finally {
    await server.close();
  }
}

/**
 * A batch's answer as an array (JSON-RPC 2.0, section 6). The SDK's transport answers a batch with
 * one response as that response alone, which a client matching a batch's answers by id cannot read.
 */
async function asBatchAnswer(response: Response): Promise<Response> {
  const text = await response.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return new Response(text, response);
  }
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const body = Array.isArray(answer) ? text : JSON.stringify([answer]);
  return new Response(body, { status: response.status, headers });
}

function isObject(value: unknown): value is RpcMessage {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
