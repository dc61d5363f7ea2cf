/**
 * One suite for `/mcp` as the official MCP SDK client (1.32.2) sees it, run against every runtime:
 * `wrangler dev` (test/node/real-clients.test.ts) and the Deno entry (test/node/deno.mcp.test.ts).
 * The target must be started with MCP_SUITE_VARS (API tokens on, one allowed browser origin) and
 * its providers pointed at the loopback emulator.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpToolListing } from "../../shared/mcp/mcp.server";
import { MCP_TOOLS } from "../../shared/tools/registry";

export const MCP_SUITE_TOKEN = "real-clients-token-0000";
export const MCP_SUITE_ALLOWED_ORIGIN = "http://localhost:6274";
/** The variables the target runs with. */
export const MCP_SUITE_VARS = { API_TOKENS: MCP_SUITE_TOKEN, SECURITY_ALLOWED_ORIGINS: MCP_SUITE_ALLOWED_ORIGIN };
export const MCP_SUITE_AUTH = { authorization: `Bearer ${MCP_SUITE_TOKEN}` };

export interface McpTarget {
  /** Base URL of the service. */
  url: string;
  emulatorUrl: string;
  /** How many calls the emulator saw for `provider` whose query/URL contains `contains`. */
  providerCalls(provider: string, contains: string): Promise<number>;
}

const ACCEPT = "application/json, text/event-stream";
const unique = () => `rc${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const textOf = (result: any): string => result.content[0].text;

/**
 * The SDK client's view of `/mcp` and the transport's error forms over real HTTP.
 * @param runtime names the describe blocks ("wrangler dev", "Deno")
 * @param target called once the file's beforeAll has started the service
 */
export function mcpClientSuite(runtime: string, target: () => McpTarget): void {
  let service: McpTarget;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  const connect = async (headers: Record<string, string>) => {
    const t = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers } });
    const c = new Client({ name: "edge-tools-test", version: "1.0.0" });
    await c.connect(t);
    return { client: c, transport: t };
  };
  const largePng = async () =>
    Buffer.from(
      (await (await fetch(`${service.emulatorUrl}/pages/image.png?w=2400&h=1600`)).arrayBuffer()) as ArrayBuffer,
    );

  describe(`the official MCP SDK client (${runtime})`, () => {
    beforeAll(async () => {
      service = target();
      ({ client, transport } = await connect(MCP_SUITE_AUTH));
    }, 60_000);

    afterAll(async () => {
      await client?.close();
    });

    it("initializes at 2025-11-25 and keeps the Mcp-Session-Id the server issued", () => {
      expect(client.getServerVersion()?.name).toBe("edge-agent-tools");
      expect(transport.protocolVersion).toBe("2025-11-25");
      expect(transport.sessionId).toMatch(/^[\x21-\x7E]{16,}$/);
    });

    it("lists the three tools as the shared registry defines them, each schema valid for draft-07 and 2020-12 validators", async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["web_search", "web_extract", "vision_analyze"]);
      // Every runtime lists what the shared code builds, so the runtimes list the same schemas.
      expect(tools).toEqual(MCP_TOOLS.map(mcpToolListing));
      const validators = [
        new Ajv({ strict: true, strictRequired: false }),
        new Ajv2020({ strict: true, strictRequired: false }),
      ];
      for (const ajv of validators) {
        for (const tool of tools) {
          expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
          expect(() => ajv.compile(tool.outputSchema!), tool.name).not.toThrow();
        }
        const vision = ajv.compile(tools[2]!.inputSchema);
        expect(vision({ image: { url: "https://example.com/a.png" }, region: [0, 0, 800, 600] })).toBe(true);
        expect(vision({ image: { url: "https://example.com/a.png" }, region: [0, 0, 800] })).toBe(false);
        expect(vision({ image: { url: "https://example.com/a.png" }, region: [0, 0, 800, 600, 1] })).toBe(false);
      }
    });

    it("calls web_search: the second call is a cache hit, the provider is paid once", async () => {
      const token = unique();
      const query = `sdk client ${token}`;
      const first = await client.callTool({ name: "web_search", arguments: { query, limit: 3 } });
      const second = await client.callTool({ name: "web_search", arguments: { query, limit: 3 } });
      expect([(first.structuredContent as any).cache, (second.structuredContent as any).cache]).toEqual([
        "miss",
        "hit",
      ]);
      expect((second.structuredContent as any).results).toHaveLength(3);
      expect(await service.providerCalls("tavily", token)).toBe(1);
    });

    it("calls web_extract", async () => {
      const url = `https://example.com/docs/${unique()}`;
      const result = await client.callTool({ name: "web_extract", arguments: { urls: [url] } });
      expect(result.isError).toBeFalsy();
      const [page] = (result.structuredContent as any).results;
      expect(page).toMatchObject({ url, cached: false, truncated: false });
      expect(page.content.length).toBeGreaterThan(0);
    });

    it("calls vision_analyze: the image only as an image block, a summary under 2 KB, the session from Mcp-Session-Id", async () => {
      const png = (await largePng()).toString("base64");
      const result: any = await client.callTool({
        name: "vision_analyze",
        arguments: { image: { data: png }, region: [0, 0, 800, 600] },
      });
      expect(result.isError).toBeFalsy();
      expect(result.content.map((block: any) => block.type)).toEqual(["text", "image"]);
      const [text, image] = result.content;
      expect(text.text.length).toBeLessThan(2048);
      // A PNG source whose lossless PNG fits and is no larger than the JPEG goes out as that PNG (docs/vision.md).
      expect(image.mimeType).toBe("image/png");
      // A real 800x600 crop, not a stub (its deflated size differs between the runtimes' CompressionStream).
      expect(image.data.length).toBeGreaterThan(4_000);
      expect(JSON.stringify({ text, structured: result.structuredContent })).not.toContain(image.data.slice(0, 64));
      expect(result.structuredContent).toMatchObject({
        path: "native",
        image: { width: 800, height: 600 },
        embed_count: 1,
      });

      // No session_id given: the SDK's Mcp-Session-Id is the session, so the loads above and below
      // count together (a crop counts as a load of its image) and the subagent cap of 3 applies.
      const args = { image: { data: png }, caller: "subagent" };
      const counts = [];
      for (let i = 0; i < 2; i++)
        counts.push(
          ((await client.callTool({ name: "vision_analyze", arguments: args })).structuredContent as any).embed_count,
        );
      expect(counts).toEqual([2, 3]);
      const capped = await client.callTool({ name: "vision_analyze", arguments: args });
      expect(capped.isError).toBe(true);
      expect(JSON.parse(textOf(capped)).error.message).toMatch(
        /^vision_analyze refused: this image has already been loaded into context 3 time\(s\)/,
      );
      // A second client has its own session.
      const other = await connect(MCP_SUITE_AUTH);
      expect(
        ((await other.client.callTool({ name: "vision_analyze", arguments: args })).structuredContent as any)
          .embed_count,
      ).toBe(1);
      await other.client.close();
    });

    it("gets bad arguments back as a tool error the model can read, and an unknown tool as JSON-RPC -32602", async () => {
      const result = await client.callTool({ name: "web_extract", arguments: { urls: [] } });
      expect(result.isError).toBe(true);
      expect(JSON.parse(textOf(result)).error).toMatchObject({
        code: "invalid_request",
        details: [{ path: ["urls"] }],
      });
      await expect(client.callTool({ name: "rm_rf", arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("rm_rf"),
      });
    });

    it("is refused without a token (401) and from a foreign Origin (403); an allowed Origin connects", async () => {
      await expect(connect({})).rejects.toMatchObject({ code: 401, message: expect.stringContaining("unauthorized") });
      await expect(connect({ ...MCP_SUITE_AUTH, origin: "https://evil.example" })).rejects.toMatchObject({
        code: 403,
        message: expect.stringContaining("security.allowed_origins"),
      });
      const allowed = await connect({ ...MCP_SUITE_AUTH, origin: MCP_SUITE_ALLOWED_ORIGIN });
      expect((await allowed.client.listTools()).tools).toHaveLength(3);
      await allowed.client.close();
    });
  });

  describe(`the transport's error forms over real HTTP (${runtime})`, () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${target().url}/mcp`, {
        method: "POST",
        headers: { ...MCP_SUITE_AUTH, accept: ACCEPT, "content-type": "application/json", ...headers },
        body,
      });
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

    it("answers each failure with its status and a JSON-RPC error", async () => {
      const cases: [string, Response, number, number | null][] = [
        ["malformed JSON", await post("{not json"), 400, -32700],
        ["not JSON (Content-Type)", await post(ping, { "content-type": "text/plain" }), 415, -32000],
        ["unsupported MCP-Protocol-Version", await post(ping, { "mcp-protocol-version": "2024-11-05" }), 400, -32000],
        ["foreign Origin", await post(ping, { origin: "https://evil.example" }), 403, -32000],
        ["no text/event-stream in Accept", await post(ping, { accept: "application/json" }), 406, -32000],
        ["a batch under 2025-06-18", await post(`[${ping}]`, { "mcp-protocol-version": "2025-06-18" }), 400, -32600],
        [
          "a request whose id is null",
          await post(JSON.stringify({ jsonrpc: "2.0", id: null, method: "ping" })),
          400,
          -32600,
        ],
        [
          "a notification",
          await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })),
          202,
          null,
        ],
        ["a posted response", await post(JSON.stringify({ jsonrpc: "2.0", id: 7, result: {} })), 202, null],
      ];
      for (const [name, response, status, code] of cases) {
        expect(response.status, name).toBe(status);
        const text = await response.text();
        if (code === null) expect(text, name).toBe("");
        else expect(JSON.parse(text), name).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
      }
    });
  });
}
