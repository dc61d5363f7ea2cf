/**
 * docs/api.md and the served OpenAPI document list the same statuses for every tool route, so a
 * client generated from either expects the answers the service gives.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../shared/app/openapi";
import { TOOLS } from "../../shared/tools/registry";

const API_MD = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8");

/** The statuses of a route's "Statuses: …." sentence in docs/api.md, sorted. */
function documented(path: string): string[] {
  const section = API_MD.split(/^### /m).find((s) => s.startsWith(`\`POST ${path}\``));
  const sentence = section && /Statuses:([\s\S]*?)\.(\s|$)/.exec(section)?.[1];
  if (!sentence) throw new Error(`docs/api.md has no "Statuses:" sentence for POST ${path}`);
  return [...sentence.matchAll(/\b[1-5]\d\d\b/g)].map((m) => m[0]).sort();
}

describe("docs/api.md and /openapi.json", () => {
  it.each(TOOLS.map((tool) => tool.path))("list the same statuses for POST %s", (path) => {
    const operation = (openApiDocument(TOOLS, "test", "").paths as Record<string, any>)[path].post;
    expect(Object.keys(operation.responses).sort()).toEqual(documented(path));
  });
});
