/**
 * `GET /` and `GET /healthz`: what a newcomer or a load balancer asks first. The index lists every
 * route with one line on what it does (JSON for API clients, a small HTML page for browsers); the
 * health check reports a configuration mistake as a 503 naming the key, before any route trips on it.
 */
import type { AppDeps } from "../ports";
import { AppError } from "../http/errors";
import { jsonResponse } from "../http/respond";

/** One line of the index. */
export interface RouteEntry {
  method: string;
  path: string;
  what: string;
}

/** Where the full contract is written, inside the repository. */
const DOCS = { contract: "docs/api.md", configuration: "docs/configuration.md", openapi: "/openapi.json" };

/**
 * The index's lines: every operation of the OpenAPI document with its summary (so a route added
 * there is listed here), then the provider proxies, which speak the providers' own APIs.
 */
export function indexRoutes(openApiPaths: Record<string, unknown>, proxies: readonly string[]): RouteEntry[] {
  const routes: RouteEntry[] = [];
  for (const [path, operations] of Object.entries(openApiPaths)) {
    if (path === "/") continue; // this page
    for (const [method, operation] of Object.entries(
      operations as Record<string, { summary?: string; description?: string }>,
    )) {
      // A short description says more than its first sentence ("Search the web" alone says little).
      const { summary = "", description } = operation;
      const what = description && description.length <= 200 && description.startsWith(summary) ? description : summary;
      routes.push({ method: method.toUpperCase(), path, what });
    }
  }
  for (const name of proxies)
    routes.push({
      method: "ANY",
      path: `/${name}/*`,
      what: `The ${name} API through the proxy: point the SDK's base URL here and send X-Session-Id to name each session (docs/proxy.md)`,
    });
  return routes;
}

/** The index of routes, as JSON or (for a browser) HTML. */
export function serviceIndex(
  deps: Pick<AppDeps, "version" | "runtime">,
  routes: readonly RouteEntry[],
  accept: string | null,
): Response {
  if (prefersHtml(accept))
    return new Response(indexHtml(deps.version, routes), { headers: { "content-type": "text/html; charset=utf-8" } });
  return jsonResponse({ name: "edge-agent-tools", version: deps.version, runtime: deps.runtime, routes, docs: DOCS });
}

/**
 * The health answer: 200 when the configuration loads, else 503 with the `config_error` (its
 * message names the key, the bad value and where to fix it on this runtime).
 */
export function healthAnswer(deps: Pick<AppDeps, "version" | "runtime" | "config">): Response {
  const base = { version: deps.version, runtime: deps.runtime };
  try {
    deps.config();
    return jsonResponse({ ok: true, ...base });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return jsonResponse({ ok: false, ...base, ...error.toBody() }, 503);
  }
}

function prefersHtml(accept: string | null): boolean {
  return accept !== null && /\btext\/html\b/i.test(accept) && !/^\s*application\/json/i.test(accept);
}

function indexHtml(version: string, routes: readonly RouteEntry[]): string {
  const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  const rows = routes
    .map((r) => {
      const path =
        r.method === "GET" ? `<a href="${escapeHtml(r.path)}">${escapeHtml(r.path)}</a>` : escapeHtml(r.path);
      return `<tr><td>${r.method}</td><td><code>${path}</code></td><td>${escapeHtml(r.what)}</td></tr>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edge-agent-tools ${escapeHtml(version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}td{padding:.25rem .75rem .25rem 0;vertical-align:top}</style></head>
<body><h1>edge-agent-tools <small>${escapeHtml(version)}</small></h1>
<p>Tool endpoints for AI agents. The contract is <code>docs/api.md</code> in the repository; <a href="/openapi.json">/openapi.json</a> describes this build; <a href="/dashboard">/dashboard</a> shows what it saved.</p>
<table>
${rows}
</table></body></html>`;
}
