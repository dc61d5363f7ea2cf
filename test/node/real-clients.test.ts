/**
 * The service as clients nobody here wrote see it, under `wrangler dev` (real workerd, local KV and
 * Durable Objects) with API tokens on: the official MCP SDK client (the suite in
 * test/support/mcp-client.suite.ts, which test/node/deno.mcp.test.ts runs on Deno), the MCP
 * Inspector CLI in `--strict` mode, draft-07 and 2020-12 JSON Schema validators, and Redocly's
 * OpenAPI linter.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack";
import { MCP_SUITE_AUTH, MCP_SUITE_TOKEN, MCP_SUITE_VARS, mcpClientSuite } from "../support/mcp-client.suite";
import { uniqueToken } from "../support/emulator-client";

const run = promisify(execFile);
/** The project's own installs (devDependencies), never a download. */
const bin = (name: string) => join(process.cwd(), "node_modules", ".bin", name);

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ vars: MCP_SUITE_VARS });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const unique = () => uniqueToken("rc");

mcpClientSuite("wrangler dev", () => stack);

describe("the MCP Inspector CLI (--strict)", () => {
  const inspector = (...args: string[]) =>
    run(
      bin("mcp-inspector"),
      ["--cli", `${stack.url}/mcp`, "--header", `Authorization: Bearer ${MCP_SUITE_TOKEN}`, ...args],
      { timeout: 60_000, env: { ...process.env, MCP_CATALOG_PATH: join(tmpdir(), `inspector-${unique()}.json`) } },
    );

  it("finds no schema portability problem in tools/list", async () => {
    const { stdout, stderr } = await inspector("--method", "tools/list", "--strict");
    expect(stderr.trim()).toBe("");
    expect(JSON.parse(stdout).tools).toHaveLength(3);
  });

  it("calls each tool, the README's region included", async () => {
    const search = JSON.parse(
      (
        await inspector(
          "--method",
          "tools/call",
          "--tool-name",
          "web_search",
          "--tool-arg",
          `query=inspector ${unique()}`,
        )
      ).stdout,
    );
    expect(search.structuredContent.success).toBe(true);
    const extract = JSON.parse(
      (
        await inspector(
          "--method",
          "tools/call",
          "--tool-name",
          "web_extract",
          "--tool-arg",
          `urls=["https://example.com/docs/${unique()}"]`,
        )
      ).stdout,
    );
    expect(extract.structuredContent.results[0].content.length).toBeGreaterThan(0);
    const png = readFileSync("docs/sample.png").toString("base64");
    const vision = JSON.parse(
      (
        await inspector(
          "--method",
          "tools/call",
          "--tool-name",
          "vision_analyze",
          "--tool-arg",
          `image={"data":"${png}"}`,
          "--tool-arg",
          "region=[0,0,800,600]",
        )
      ).stdout,
    );
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
    const response = await fetch(`${stack.url}/v1/vision_analyze`, {
      method: "POST",
      headers: MCP_SUITE_AUTH,
      body: form,
    });
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
      const { stdout, stderr } = await run(bin("redocly"), ["lint", "openapi.json", "--format", "summary"], {
        cwd: dir,
        timeout: 60_000,
      }).catch((error) => error);
      const output = `${stdout}\n${stderr}`;
      expect(output).toContain("Your API description is valid");
      expect(output).not.toMatch(/\d+ (error|warning)s?\b/);
      expect(output).toContain("4 problems are explicitly ignored"); // .redocly.lint-ignore.yaml, no more
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
