/**
 * /mcp inside workerd, message by message: the Streamable HTTP transport's MUSTs (status codes,
 * JSON-RPC error forms, Origin, protocol version, Accept, batches, session id) and the tool results.
 * test/node/real-clients.test.ts (wrangler dev) and test/node/deno.mcp.test.ts (Deno) drive the
 * same endpoint with the official SDK client (test/support/mcp-client.suite.ts), the first also
 * with the Inspector CLI.
 */
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it, vi } from "vitest";
import { call, callJson, providerCalls, uniqueToken } from "./helpers";

const ACCEPT = "application/json, text/event-stream";

const rpc = (body: unknown, headers: Record<string, string> = {}, vars?: Record<string, unknown>, at?: string) =>
  callJson("/mcp", { body, vars, headers: { accept: ACCEPT, ...headers }, ...(at ? { at } : {}) });

const initialize = (protocolVersion: string, headers: Record<string, string> = {}, vars?: Record<string, unknown>) =>
  rpc(
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "1" } },
    },
    headers,
    vars,
  );

const toolCall = (name: string, args: unknown, headers: Record<string, string> = {}) =>
  rpc(
    { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name, arguments: args } },
    { "mcp-protocol-version": "2025-11-25", ...headers },
  );

/** A 2x1 PNG (red, blue) with right CRCs and zlib checksum: passes the full verification unchanged. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGP4z8DAwPAfAAcAAf9+CLHQAAAAAElFTkSuQmCC";

describe("/mcp lifecycle", () => {
  it("negotiates 2025-11-25 down to 2025-03-26 and offers the newest for anything else", async () => {
    for (const version of ["2025-11-25", "2025-06-18", "2025-03-26"]) {
      expect((await initialize(version)).body.result.protocolVersion, version).toBe(version);
    }
    for (const version of ["2024-11-05", "2099-01-01"]) {
      expect((await initialize(version)).body.result.protocolVersion, version).toBe("2025-11-25");
    }
    const { body } = await initialize("2025-11-25");
    expect(body.result.capabilities.tools).toEqual({ listChanged: false });
    expect(body.result.serverInfo.name).toBe("edge-agent-tools");
  });

  it("issues a fresh Mcp-Session-Id on initialize", async () => {
    const first = (await initialize("2025-11-25")).headers.get("mcp-session-id");
    const second = (await initialize("2025-11-25")).headers.get("mcp-session-id");
    expect(first).toMatch(/^[\x21-\x7E]{16,256}$/);
    expect(second).not.toBe(first);
  });

  it("answers notifications and posted responses with 202 and no body", async () => {
    for (const message of [
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 99, result: {} },
      { jsonrpc: "2.0", id: 98, error: { code: -1, message: "client side failure" } },
    ]) {
      const response = await call("/mcp", { body: message, headers: { accept: ACCEPT } });
      expect(response.status, JSON.stringify(message)).toBe(202);
      expect(await response.text()).toBe("");
    }
  });
});

describe("/mcp transport errors", () => {
  it("answers malformed JSON with HTTP 400 and JSON-RPC -32700", async () => {
    const response = await call("/mcp", {
      raw: '{"jsonrpc": "2.0", "id": 1, "method": ',
      headers: { accept: ACCEPT, "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("refuses messages that are not JSON-RPC, and a request with id null as an Invalid Request", async () => {
    for (const [message, code] of [
      [{ hello: "world" }, -32700],
      [{ jsonrpc: "2.0", id: null, method: "ping" }, -32600],
    ] as const) {
      const { status, body } = await rpc(message);
      expect(status, JSON.stringify(message)).toBe(400);
      expect(body.error.code).toBe(code);
      expect(body.result).toBeUndefined();
    }
  });

  it("refuses an unsupported MCP-Protocol-Version with 400", async () => {
    for (const version of ["2024-11-05", "1999-01-01"]) {
      const { status, body } = await rpc(
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { "mcp-protocol-version": version },
      );
      expect(status, version).toBe(400);
      expect(body.error.message).toContain("2025-11-25");
    }
    expect(
      (await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-protocol-version": "2025-06-18" })).status,
    ).toBe(200);
  });

  it("checks Accept and Content-Type", async () => {
    const noSse = await callJson("/mcp", {
      body: { jsonrpc: "2.0", id: 1, method: "ping" },
      headers: { accept: "application/json" },
    });
    expect(noSse.status).toBe(406);
    expect(noSse.body.error.code).toBe(-32000);
    for (const contentType of ["text/plain", ""]) {
      const text = await callJson("/mcp", {
        raw: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        headers: { accept: ACCEPT, "content-type": contentType },
      });
      expect(text.status, contentType).toBe(415);
      expect(text.body, contentType).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message: "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json.",
        },
      });
    }
    // Content-Type is judged before the protocol version and the body.
    const first = await callJson("/mcp", {
      raw: "{not json",
      headers: { accept: ACCEPT, "content-type": "text/plain", "mcp-protocol-version": "1999-01-01" },
    });
    expect(first.status).toBe(415);
    const json = await callJson("/mcp", {
      raw: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      headers: { accept: ACCEPT, "content-type": "application/json; charset=UTF-8" },
    });
    expect(json.status).toBe(200);
  });

  it("takes batches under 2025-03-26 only", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    const old = await rpc(batch, { "mcp-protocol-version": "2025-03-26" });
    expect(old.status).toBe(200);
    expect(old.body.map((r: any) => r.id).sort()).toEqual([1, 2]);
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const { status, body } = await rpc(batch, { "mcp-protocol-version": version });
      expect(status, version).toBe(400);
      expect(body.error.code).toBe(-32600);
    }
    expect((await rpc([], { "mcp-protocol-version": "2025-03-26" })).status).toBe(400);
    // A batch is answered with an array, also when one request in it has an answer.
    for (const one of [
      [{ jsonrpc: "2.0", id: 7, method: "ping" }],
      [
        { jsonrpc: "2.0", id: 8, method: "ping" },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ],
    ]) {
      const { status, body } = await rpc(one, { "mcp-protocol-version": "2025-03-26" });
      expect(status).toBe(200);
      expect(body).toEqual([{ jsonrpc: "2.0", id: one[0]!.id, result: {} }]);
    }
  });

  it("refuses a malformed Mcp-Session-Id", async () => {
    const { status } = await rpc({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-session-id": "has space" });
    expect(status).toBe(400);
  });

  it("answers unknown methods with -32601", async () => {
    const { status, body } = await rpc({ jsonrpc: "2.0", id: 1, method: "nope/nope" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: 1, error: { code: -32601 } });
  });

  it("takes POST only", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await call("/mcp", { method, headers: { accept: "text/event-stream" } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });
});

describe("/mcp Origin and auth", () => {
  const ping = { jsonrpc: "2.0", id: 1, method: "ping" };

  it("refuses a foreign Origin with 403 and passes same-origin and Origin-less requests", async () => {
    const foreign = await rpc(ping, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain("security.allowed_origins");
    expect(foreign.headers.get("x-request-id")).toBeTruthy();
    expect((await rpc(ping, { origin: "null" })).status).toBe(403);
    expect((await rpc(ping)).status).toBe(200);
    // Its own origin, reached by an address or localhost, which no other site's page can be on.
    for (const own of ["http://127.0.0.1:8787", "http://localhost:8787", "http://[::1]:8787"])
      expect((await rpc(ping, { origin: own }, undefined, own)).status, own).toBe(200);
    // Under a name, its own origin counts only when a token is needed (deployed): a page has none.
    const tokens = { API_TOKENS: "own-token", SECURITY_ALLOW_ANONYMOUS: "false" };
    const deployed = await rpc(ping, { origin: "https://service.test", authorization: "Bearer own-token" }, tokens);
    expect(deployed.status).toBe(200);
  });

  it("refuses a DNS-rebinding page while it takes calls without a token: the attacker's name as both Host and Origin", async () => {
    // rebind.attacker.example first resolved to the attacker's server, then to 127.0.0.1.
    const origin = "http://rebind.attacker.example:8787";
    const rebound = await rpc(ping, { origin }, undefined, origin);
    expect(rebound.status).toBe(403);
    expect(rebound.body.error.message).toContain("security.allowed_origins");
  });

  it("accepts the origins of security.allowed_origins", async () => {
    const vars = { SECURITY_ALLOWED_ORIGINS: "https://app.example.com/, http://localhost:6274" };
    expect((await rpc(ping, { origin: "https://app.example.com" }, vars)).status).toBe(200);
    expect((await rpc(ping, { origin: "http://localhost:6274" }, vars)).status).toBe(200);
    expect((await rpc(ping, { origin: "https://other.example.com" }, vars)).status).toBe(403);
  });

  it("answers an allowed origin's CORS preflight before auth, and lets it read the session id", async () => {
    const vars = { SECURITY_ALLOWED_ORIGINS: "http://localhost:6274", API_TOKENS: "cors-token" };
    const preflight = await call("/mcp", {
      method: "OPTIONS",
      vars,
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-session-id, authorization",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("mcp-session-id");
    const answer = await initialize(
      "2025-11-25",
      { origin: "http://localhost:6274", authorization: "Bearer cors-token" },
      vars,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(answer.headers.get("access-control-expose-headers")).toContain("mcp-session-id");
    const foreign = await call("/mcp", {
      method: "OPTIONS",
      vars,
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(foreign.status).toBe(403);
  });

  it("needs a bearer token when API_TOKENS is set", async () => {
    const vars = { API_TOKENS: "mcp-test-token" };
    const anonymous = await rpc(ping, {}, vars);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe("unauthorized");
    expect((await rpc(ping, { authorization: "Bearer mcp-test-token" }, vars)).status).toBe(200);
    // Origin is checked first: a foreign page learns nothing about the tokens.
    expect((await rpc(ping, { origin: "https://evil.example" }, vars)).status).toBe(403);
  });
});

/** Each tool's listed outputSchema, as the SDK client checks structuredContent (here with the validator the server uses). */
async function outputValidators(): Promise<Map<string, Validator>> {
  const { body } = await rpc({ jsonrpc: "2.0", id: "list", method: "tools/list" });
  return new Map((body.result.tools as any[]).map((tool) => [tool.name, new Validator(tool.outputSchema, "2020-12")]));
}

function expectConforms(validators: Map<string, Validator>, name: string, result: any): void {
  const outcome = validators.get(name)!.validate(result.structuredContent);
  expect(outcome.errors.slice(0, 3), `${name} structuredContent vs its outputSchema`).toEqual([]);
}

describe("/mcp tools", () => {
  it("lists the tools with portable input schemas and object output schemas", async () => {
    const { body } = await rpc({ jsonrpc: "2.0", id: "list", method: "tools/list" });
    const tools = body.result.tools as any[];
    expect(tools.map((t) => t.name)).toEqual(["web_search", "web_extract", "vision_analyze"]);
    const search = tools[0];
    expect(search.inputSchema).toMatchObject({
      type: "object",
      required: ["query"],
      properties: { query: { maxLength: 2048 }, limit: { type: "integer" } },
    });
    const vision = tools[2];
    expect(vision.inputSchema.properties.region).toEqual({
      description: expect.any(String),
      type: "array",
      items: { type: "integer", minimum: -1_000_000, maximum: 1_000_000 },
      minItems: 4,
      maxItems: 4,
    });
    expect(vision.inputSchema.required).toEqual(["image"]);
    expect(JSON.stringify(body)).not.toContain("prefixItems");
    for (const tool of tools) expect(tool.outputSchema.type, tool.name).toBe("object");
    expect(JSON.stringify(vision.outputSchema)).not.toContain('"data"');
    // Built once: a second tools/list shows the very same schemas.
    expect((await rpc({ jsonrpc: "2.0", id: "list", method: "tools/list" })).body).toEqual(body);
  });

  it("calls web_search through the same cache as the HTTP route", async () => {
    const token = uniqueToken();
    await callJson("/v1/web_search", { body: { query: `mcp shared ${token}` } });
    const { body } = await toolCall("web_search", { query: `mcp shared ${token}`, limit: 3 });
    expect(body.id).toBe(5);
    expect(body.result.isError).toBeUndefined();
    expect(body.result.structuredContent.cache).toBe("hit");
    expect(body.result.structuredContent.results).toHaveLength(3);
    expect(JSON.parse(body.result.content[0].text)).toEqual(body.result.structuredContent);
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("returns a vision result's image only as an image block, next to a short summary", async () => {
    const { body } = await toolCall("vision_analyze", { image: { data: PNG }, session_id: uniqueToken() });
    const [text, image, ...rest] = body.result.content;
    expect(rest).toEqual([]);
    expect(image).toEqual({ type: "image", data: PNG, mimeType: "image/png" });
    expect(text.type).toBe("text");
    expect(text.text.length).toBeLessThan(2048);
    expect(text.text).toContain("2x1");
    const serialized = JSON.stringify({ text, structured: body.result.structuredContent });
    expect(serialized).not.toContain(PNG.slice(0, 40));
    expect(body.result.structuredContent).toMatchObject({
      path: "native",
      image: { width: 2, height: 1, media_type: "image/png" },
      embed_count: 1,
    });
  });

  it("uses the Mcp-Session-Id as vision_analyze's default session_id", async () => {
    const session = { "mcp-session-id": `s-${uniqueToken()}` };
    const args = { image: { data: PNG }, caller: "subagent" };
    for (let i = 1; i <= 3; i++)
      expect((await toolCall("vision_analyze", args, session)).body.result.structuredContent.embed_count).toBe(i);
    const capped = await toolCall("vision_analyze", args, session);
    expect(capped.body.result.isError).toBe(true);
    expect(JSON.parse(capped.body.result.content[0].text).error.code).toBe("embed_cap_reached");
    // Another session, or an explicit session_id, counts on its own.
    expect(
      (await toolCall("vision_analyze", args, { "mcp-session-id": `s-${uniqueToken()}` })).body.result.structuredContent
        .embed_count,
    ).toBe(1);
    expect(
      (await toolCall("vision_analyze", { ...args, session_id: uniqueToken() }, session)).body.result.structuredContent
        .embed_count,
    ).toBe(1);
  });

  it("returns structuredContent that matches each tool's outputSchema, in-band errors included", async () => {
    const validators = await outputValidators();
    for (const validator of validators.values())
      expect(validator.validate({ success: true, extra: 1 }).valid).toBe(false);
    const token = uniqueToken();
    expectConforms(
      validators,
      "web_search",
      (await toolCall("web_search", { query: `conforms ${token}` })).body.result,
    );
    const extract = (
      await toolCall("web_extract", { urls: [`https://example.com/docs/${token}`, "http://10.0.0.1/admin"] })
    ).body.result;
    expect(extract.structuredContent.results[1].error.code).toBe("blocked_private_address");
    expectConforms(validators, "web_extract", extract);
    expectConforms(
      validators,
      "vision_analyze",
      (await toolCall("vision_analyze", { image: { data: PNG }, session_id: token })).body.result,
    );
  });

  it("reports bad arguments as tool errors the model can read, and runs vision without a session uncounted", async () => {
    const bad = await toolCall("web_search", { query: "" });
    expect(bad.body.result.isError).toBe(true);
    const error = JSON.parse(bad.body.result.content[0].text).error;
    expect(error.code).toBe("invalid_request");
    expect(error.details[0].path).toEqual(["query"]);
    const noSession = await toolCall("vision_analyze", { image: { data: PNG } });
    expect(noSession.body.result.isError).toBeFalsy();
    expect(noSession.body.result.structuredContent.embed_count).toBeNull();
  });
});

describe("/mcp server-side failures", () => {
  it("logs a tool's 5xx (code and request id, never a key) as the HTTP routes do, a warning when expected, and answers it in-band", async () => {
    const lines: string[] = [];
    const spies = (["error", "warn"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((line: unknown) => void lines.push(String(line))),
    );
    try {
      const failed = await toolCall("web_search", { query: `provider down [fail:503] ${uniqueToken()}` });
      expect(failed.body.result.isError).toBe(true);
      const error = JSON.parse(failed.body.result.content[0].text).error;
      expect(error.code).toBe("provider_error");
      const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.event === "mcp_tool_failed");
      // A provider down is expected: a warning, not an error (the level api.md gives it on the HTTP routes).
      expect(logged).toMatchObject({ level: "warn", tool: "web_search", code: "provider_error" });
      expect(typeof logged.request_id).toBe("string");
      expect(lines.join("\n")).not.toContain("EMULATOR_API_KEY");
      // A caller's mistake (a 4xx) is not a server failure: nothing logged.
      lines.length = 0;
      await toolCall("web_search", { query: "" });
      expect(lines.filter((line) => line.includes("mcp_tool_failed"))).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

describe("/openapi.json", () => {
  it("describes the answers of its GET routes as they are: /, /healthz and /v1/config validate against it", async () => {
    const { body: document } = await callJson("/openapi.json");
    for (const path of ["/", "/healthz", "/v1/config"]) {
      const schema = document.paths[path].get.responses["200"].content["application/json"].schema;
      const validator = new Validator({ ...schema, components: document.components }, "2020-12");
      const { body } = await callJson(path, { headers: { accept: "application/json" } });
      const result = validator.validate(body);
      expect(result.valid, `${path}: ${JSON.stringify(result.errors.slice(0, 2))}`).toBe(true);
    }
  });

  it("documents every route with an operationId, request and response schemas and its statuses", async () => {
    const { status, body } = await callJson("/openapi.json");
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    expect(body.servers).toEqual([{ url: "https://service.test", description: expect.any(String) }]);
    expect(body.info.license.name).toBeTruthy();
    const operations = Object.entries(body.paths).flatMap(([path, item]: [string, any]) =>
      Object.entries(item).map(([method, op]: [string, any]) => ({ path, method, op })),
    );
    expect(operations.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      [
        "get /",
        "get /dashboard",
        "get /healthz",
        "get /openapi.json",
        "get /v1/config",
        "get /v1/stats",
        "get /v1/stats/sessions",
        "post /mcp",
        "post /v1/cache/purge",
        "post /v1/context/evict",
        "post /v1/vision_analyze",
        "post /v1/web_extract",
        "post /v1/web_search",
      ].sort(),
    );
    for (const { path, op } of operations) {
      expect(op.operationId, path).toMatch(/^[a-z_]+$/);
      // The dashboard is the one page (HTML); every other route answers JSON.
      const media = path === "/dashboard" ? "text/html" : "application/json";
      expect(op.responses["200"].content[media].schema, path).toBeDefined();
      expect(op.responses["200"].headers["X-Request-Id"], path).toBeDefined();
    }
    const search = body.paths["/v1/web_search"].post;
    expect(search.requestBody.content["application/json"].schema.properties.query.type).toBe("string");
    expect(search.responses["200"].content["application/json"].schema.properties.cache.enum).toEqual([
      "hit",
      "miss",
      "coalesced",
      "bypass",
    ]);
    expect(search.responses["200"].headers["X-Cache"]).toBeDefined();
    expect(search.responses["200"].headers.Age).toBeDefined();
    for (const path of ["/v1/web_search", "/v1/web_extract"]) {
      const op = body.paths[path].post;
      const input = op.requestBody.content["application/json"].schema.properties;
      // No maximum: a longer max_age reads as a year.
      expect([input.max_age.type, input.max_age.minimum, input.max_age.maximum, input.store.type], path).toEqual([
        "integer",
        0,
        undefined,
        "boolean",
      ]);
      expect(
        op.parameters.map((p: any) => [p.in, p.name]),
        path,
      ).toEqual([["header", "Cache-Control"]]);
    }
    expect(search.responses["200"].content["application/json"].schema.properties.cached_at.type).toBe("string");
    const purge = body.paths["/v1/cache/purge"].post;
    expect(Object.keys(purge.requestBody.content["application/json"].schema.properties)).toEqual(["search", "extract"]);
    expect(purge.responses["200"].content["application/json"].schema.properties.purged.type).toBe("integer");
    expect(Object.keys(search.responses)).toEqual(
      expect.arrayContaining(["400", "401", "413", "415", "502", "503", "504"]),
    );
    expect(Object.keys(body.paths["/v1/web_extract"].post.responses)).toContain("422");
    const vision = body.paths["/v1/vision_analyze"].post;
    expect(Object.keys(vision.responses)).toEqual(expect.arrayContaining(["403", "409", "413", "415", "422"]));
    const multipart = vision.requestBody.content["multipart/form-data"];
    expect(multipart.schema.properties.image).toMatchObject({ type: "string", format: "binary" });
    expect(multipart.schema.required).toEqual(["image"]);
    expect(multipart.encoding.region.contentType).toBe("application/json");
    expect(Object.keys(body.paths["/mcp"].post.responses)).toEqual(
      expect.arrayContaining(["200", "202", "400", "401", "403", "406"]),
    );
    expect(
      body.paths["/v1/config"].get.responses["200"].content["application/json"].schema.properties.security.properties
        .allowed_origins,
    ).toBeDefined();
  });
});
