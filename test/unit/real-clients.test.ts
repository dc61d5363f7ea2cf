/**
 * The service as clients nobody here wrote see it, under `wrangler dev` (real workerd, local KV and
 * Durable Objects) with API tokens on: the official MCP SDK client, the MCP Inspector CLI in
 * `--strict` mode, draft-07 and 2020-12 JSON Schema validators, and Redocly's OpenAPI linter.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack";

const TOKEN = "real-clients-token-0000";
const ALLOWED_ORIGIN = "http://localhost:6274";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const ACCEPT = "application/json, text/event-stream";
const run = promisify(execFile);
/** The project's own installs (devDependencies), never a download. */
const bin = (name: string) => join(process.cwd(), "node_modules", ".bin", name);

let stack: LocalStack;
let client: Client;
let transport: StreamableHTTPClientTransport;

const connect = async (headers: Record<string, string>) => {
  const t = new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers } });
  const c = new Client({ name: "edge-tools-test", version: "1.0.0" });
  await c.connect(t);
  return { client: c, transport: t };
};

beforeAll(async () => {
  stack = await startLocalStack({ vars: { API_TOKENS: TOKEN, SECURITY_ALLOWED_ORIGINS: ALLOWED_ORIGIN } });
  ({ client, transport } = await connect(AUTH));
}, 120_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

const unique = () => `rc${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const largePng = async () => Buffer.from((await (await fetch(`${stack.emulatorUrl}/pages/image.png?w=2400&h=1600`)).arrayBuffer()) as ArrayBuffer);
const textOf = (result: any): string => result.content[0].text;

describe("the official MCP SDK client", () => {
  it("initializes at 2025-11-25 and keeps the Mcp-Session-Id the server issued", () => {
    expect(client.getServerVersion()?.name).toBe("edge-agent-tools");
    expect(transport.protocolVersion).toBe("2025-11-25");
    expect(transport.sessionId).toMatch(/^[\x21-\x7E]{16,}$/);
  });

  it("lists the three tools, each input schema valid for draft-07 and 2020-12 validators", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["web_search", "web_extract", "vision_analyze"]);
    const validators = [new Ajv({ strict: true, strictRequired: false }), new Ajv2020({ strict: true, strictRequired: false })];
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
    const query = `sdk client ${unique()}`;
    const first = await client.callTool({ name: "web_search", arguments: { query, limit: 3 } });
    const second = await client.callTool({ name: "web_search", arguments: { query, limit: 3 } });
    expect([(first.structuredContent as any).cache, (second.structuredContent as any).cache]).toEqual(["miss", "hit"]);
    expect((second.structuredContent as any).results).toHaveLength(3);
    expect(await stack.providerCalls("tavily", query.split(" ")[2]!)).toBe(1);
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
    const result: any = await client.callTool({ name: "vision_analyze", arguments: { image: { data: png }, region: [0, 0, 800, 600] } });
    expect(result.isError).toBeFalsy();
    expect(result.content.map((block: any) => block.type)).toEqual(["text", "image"]);
    const [text, image] = result.content;
    expect(text.text.length).toBeLessThan(2048);
    expect(image.mimeType).toBe("image/jpeg");
    expect(image.data.length).toBeGreaterThan(10_000);
    expect(JSON.stringify({ text, structured: result.structuredContent })).not.toContain(image.data.slice(0, 64));
    expect(result.structuredContent).toMatchObject({ path: "native", image: { width: 800, height: 600 }, embed_count: 1 });

    // No session_id given: the SDK's Mcp-Session-Id is the session, so the loads above and below
    // count together (a crop counts as a load of its image) and the subagent cap of 3 applies.
    const args = { image: { data: png }, caller: "subagent" };
    const counts = [];
    for (let i = 0; i < 2; i++) counts.push(((await client.callTool({ name: "vision_analyze", arguments: args })).structuredContent as any).embed_count);
    expect(counts).toEqual([2, 3]);
    const capped = await client.callTool({ name: "vision_analyze", arguments: args });
    expect(capped.isError).toBe(true);
    expect(JSON.parse(textOf(capped)).error.message).toMatch(/^vision_analyze refused: this image has already been loaded into context 3 time\(s\)/);
    // A second client has its own session.
    const other = await connect(AUTH);
    expect(((await other.client.callTool({ name: "vision_analyze", arguments: args })).structuredContent as any).embed_count).toBe(1);
    await other.client.close();
  });

  it("gets bad arguments back as a tool error with every bad field", async () => {
    const result = await client.callTool({ name: "web_extract", arguments: { urls: [] } });
    expect(result.isError).toBe(true);
    expect(JSON.parse(textOf(result)).error).toMatchObject({ code: "invalid_request", details: [{ path: ["urls"] }] });
  });

  it("is refused without a token (401) and from a foreign Origin (403); an allowed Origin connects", async () => {
    await expect(connect({})).rejects.toMatchObject({ code: 401, message: expect.stringContaining("unauthorized") });
    await expect(connect({ ...AUTH, origin: "https://evil.example" })).rejects.toMatchObject({ code: 403, message: expect.stringContaining("security.allowed_origins") });
    const allowed = await connect({ ...AUTH, origin: ALLOWED_ORIGIN });
    expect((await allowed.client.listTools()).tools).toHaveLength(3);
    await allowed.client.close();
  });
});

describe("the transport's error forms over real HTTP", () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.url}/mcp`, { method: "POST", headers: { ...AUTH, accept: ACCEPT, "content-type": "application/json", ...headers }, body });
  const ping = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

  it("answers each failure with its status and a JSON-RPC error", async () => {
    const cases: [string, Response, number, number | null][] = [
      ["malformed JSON", await post("{not json"), 400, -32700],
      ["unsupported MCP-Protocol-Version", await post(ping, { "mcp-protocol-version": "2024-11-05" }), 400, -32000],
      ["foreign Origin", await post(ping, { origin: "https://evil.example" }), 403, -32000],
      ["no text/event-stream in Accept", await post(ping, { accept: "application/json" }), 406, -32000],
      ["a batch under 2025-06-18", await post(`[${ping}]`, { "mcp-protocol-version": "2025-06-18" }), 400, -32600],
      ["a notification", await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })), 202, null],
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

describe("the MCP Inspector CLI (--strict)", () => {
  const inspector = (...args: string[]) =>
    run(bin("mcp-inspector"), ["--cli", `${stack.url}/mcp`, "--header", `Authorization: Bearer ${TOKEN}`, ...args], { timeout: 60_000, env: { ...process.env, MCP_CATALOG_PATH: join(tmpdir(), `inspector-${unique()}.json`) } });

  it("finds no schema portability problem in tools/list", async () => {
    const { stdout, stderr } = await inspector("--method", "tools/list", "--strict");
    expect(stderr.trim()).toBe("");
    expect(JSON.parse(stdout).tools).toHaveLength(3);
  });

  it("calls each tool, the README's region included", async () => {
    const search = JSON.parse((await inspector("--method", "tools/call", "--tool-name", "web_search", "--tool-arg", `query=inspector ${unique()}`)).stdout);
    expect(search.structuredContent.success).toBe(true);
    const extract = JSON.parse((await inspector("--method", "tools/call", "--tool-name", "web_extract", "--tool-arg", `urls=["https://example.com/docs/${unique()}"]`)).stdout);
    expect(extract.structuredContent.results[0].content.length).toBeGreaterThan(0);
    const png = readFileSync("docs/sample.png").toString("base64");
    const vision = JSON.parse((await inspector("--method", "tools/call", "--tool-name", "vision_analyze", "--tool-arg", `image={"data":"${png}"}`, "--tool-arg", "region=[0,0,800,600]")).stdout);
    expect(vision.structuredContent.image).toMatchObject({ width: 800, height: 600 });
    expect(vision.content.map((block: any) => block.type)).toEqual(["text", "image"]);
  });
});

describe("the README", () => {
  it("runs the multipart example with the committed sample image", async () => {
    const form = new FormData();
    form.set("image", new Blob([readFileSync("docs/sample.png")], { type: "image/png" }), "sample.png");
    form.set("session_id", "s1");
    form.set("region", "[0,0,800,600]");
    const response = await fetch(`${stack.url}/v1/vision_analyze`, { method: "POST", headers: AUTH, body: form });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).image).toMatchObject({ width: 800, height: 600 });
  });
});

describe("/openapi.json under Redocly's linter", () => {
  it("passes the recommended rules with no error and no warning", async () => {
    const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
    try {
      writeFileSync(join(dir, "openapi.json"), await fetch(`${stack.url}/openapi.json`).then((r) => r.text()));
      copyFileSync(".redocly.lint-ignore.yaml", join(dir, ".redocly.lint-ignore.yaml"));
      const { stdout, stderr } = await run(bin("redocly"), ["lint", "openapi.json", "--format", "summary"], { cwd: dir, timeout: 60_000 }).catch((error) => error);
      const output = `${stdout}\n${stderr}`;
      expect(output).toContain("Your API description is valid");
      expect(output).not.toMatch(/\d+ (error|warning)s?\b/);
      expect(output).toContain("2 problems are explicitly ignored"); // .redocly.lint-ignore.yaml, no more
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
