/**
 * The pure application: routes, middleware and error rendering, built from ports only.
 * Each runtime's entry (workers/index.ts, deno/main.ts) turns its bindings into `AppDeps`.
 */
import { Hono, type Context } from "hono";
import { cors } from "hono/cors";
import type { LoadedConfig } from "../config/config.load";
import type { AppDeps, LedgerStore, RequestLogFields, StatsRequest } from "../ports";
import { publicConfig } from "../config/config.load";
import { authorize, callerOf, takesAnonymousCalls } from "../http/auth";
import { parseJsonText, readJsonText } from "../http/body";
import { AppError } from "../http/errors";
import { isMultipart, readMultipart } from "../http/multipart";
import { healthAnswer, indexRoutes, type RouteEntry, serviceIndex } from "./home";
import { type BuiltResponse, requestLog } from "./request-log";
import { errorResponse, jsonResponse } from "../http/respond";
import { parseRequest } from "../http/validate";
import { MCP_CORS, handleMcpPost, mcpOriginRefusal } from "../mcp/mcp.http";
import { anonymousOriginRefusal, isAllowedOrigin } from "../safety/origin";
import { learnedImageCosts } from "../eviction/image-cost";
import { openApiDocument } from "./openapi";
import { proxyRequest } from "../proxy/proxy.service";
import { LLM_PROVIDERS } from "../llm/llm-providers.catalog";
import { DASHBOARD_CSP, DASHBOARD_JS, dashboardHtml } from "../stats/dashboard.page";
import { StatsQuery, statsQuery } from "../stats/stats.schema";
import { stats } from "../stats/stats.service";
import { MCP_TOOLS, TOOLS } from "../tools/registry";
import { InputMemo } from "../tools/input-memo";
import type { ToolContext, ToolDefinition } from "../tools/tool.types";

type Env = {
  Variables: { requestId: string; loaded: LoadedConfig; logFields?: RequestLogFields; built?: BuiltResponse };
};
type Handler = (c: Context<Env>) => Promise<Response> | Response;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The fields a tool reads from headers, under the JSON body's own (which win). */
function withHeaderFields(tool: ToolDefinition, headers: Headers, body: unknown): unknown {
  if (!tool.requestHeaders || body === null || typeof body !== "object" || Array.isArray(body)) return body;
  return { ...tool.requestHeaders.toFields(headers), ...body };
}

/**
 * The app: the middleware (request id, request log, the token and origin checks), then the routes
 * in the order they match: index, health, config, the ledger, the dashboard, the tools and /mcp,
 * the provider proxy, the OpenAPI document; then the 404 and the error renderer.
 */
export function createApp(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  // The request log runs inside this middleware, not as a step of its own: one dispatch fewer on
  // every request's path.
  const logRequest = requestLog<Env>(deps.log, deps.clock);
  app.use("*", async (c, next) => {
    const given = c.req.header("x-request-id");
    c.set("requestId", given && REQUEST_ID.test(given) ? given : crypto.randomUUID());
    await logRequest(c, next);
    // A tool's answer was built with this request's id (`builtJson`): its headers are left unread.
    if (c.get("built")?.response === c.res) return;
    // A provider's own X-Request-Id (OpenAI's, relayed by the proxy) reaches its SDK unchanged;
    // this service's id, the one its log lines carry, goes beside it.
    // An error answer already carries this service's id: nothing to put beside it.
    const carried = c.res.headers.get("x-request-id");
    if (carried === null) c.res.headers.set("x-request-id", c.get("requestId"));
    else if (carried !== c.get("requestId")) c.res.headers.set("x-edge-request-id", c.get("requestId"));
  });

  const authenticate = async (c: Context<Env>, next: () => Promise<void>) => {
    const loaded = deps.config();
    c.set("loaded", loaded);
    const anonymous = takesAnonymousCalls(loaded);
    const refusal = anonymousOriginRefusal(c.req.raw, loaded.config.security.allowed_origins, anonymous);
    if (refusal) throw refusal;
    // No tokens and anonymous calls taken: authorize would pass every request, so it is not awaited.
    if (!anonymous)
      await authorize(
        c.req.header("authorization") ?? null,
        loaded.secrets.API_TOKENS,
        loaded.config.security.allow_anonymous,
      );
    await next();
  };
  app.use("/v1/*", authenticate);
  // Origin first: a foreign page's request is refused whatever its credentials.
  app.use("/mcp", async (c, next) => {
    const loaded = deps.config();
    const refusal = mcpOriginRefusal(c.req.raw, loaded.config.security.allowed_origins, takesAnonymousCalls(loaded));
    if (refusal) return refusal;
    await next();
  });
  const allowedOrigin = (origin: string) =>
    isAllowedOrigin(origin, deps.config().config.security.allowed_origins) ? origin : null;
  app.use("/mcp", cors({ origin: allowedOrigin, ...MCP_CORS }));
  app.use("/mcp", authenticate);

  const route = methodRouter(app);

  // The index lists what the OpenAPI document describes (built on the first visit: the origin
  // does not change its paths).
  let routes: RouteEntry[] | undefined;
  const indexOf = () =>
    (routes ??= indexRoutes(
      openApiDocument(TOOLS, deps.version, "").paths as Record<string, unknown>,
      LLM_PROVIDERS.map((spec) => spec.name),
    ));
  route("/", { GET: (c) => serviceIndex(deps, indexOf(), c.req.header("accept") ?? null) });
  route("/healthz", { GET: () => healthAnswer(deps) });

  route("/v1/config", {
    // What this isolate (or process) learned of image costs from billed usage (docs/eviction.md).
    GET: (c) => jsonResponse({ ...publicConfig(c.get("loaded")), learned_image_tokens: learnedImageCosts.snapshot() }),
  });

  ledgerRoutes(route, deps);
  dashboardRoutes(route, deps);
  toolRoutes(route, deps);

  // The provider proxy (docs/proxy.md): its own auth and the provider's error shape.
  for (const spec of LLM_PROVIDERS)
    app.all(`/${spec.name}/*`, (c) =>
      proxyRequest(c.req.raw, spec, { ports: deps, loaded: deps.config(), requestId: c.get("requestId") }),
    );

  route("/openapi.json", {
    GET: (c) => jsonResponse(openApiDocument(TOOLS, deps.version, new URL(c.req.url).origin)),
  });

  handleErrors(app);
  return app;
}

/** Registers a path's methods, and a 405 with `Allow` for every other method of it. */
type Route = (path: string, methods: Partial<Record<"GET" | "POST", Handler>>) => void;

/** The `Route` of `app`. */
function methodRouter(app: Hono<Env>): Route {
  return (path, methods) => {
    for (const [method, handler] of Object.entries(methods)) app.on(method, path, handler);
    const allow = Object.keys(methods)
      .flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m]))
      .join(", ");
    app.all(path, () => {
      throw new AppError(405, "method_not_allowed", `This route takes ${allow} only.`, { details: { allow } });
    });
  };
}

/** The ledger's reads (`/v1/stats`, `/v1/stats/sessions`) over the query's window; a store that cannot be read is a 503. */
function ledgerRoutes(route: Route, deps: AppDeps): void {
  const ledgerRoute =
    (name: string, read: (store: LedgerStore, request: StatsRequest) => Promise<unknown>): Handler =>
    async (c) => {
      const { window } = parseRequest(StatsQuery, statsQuery(new URL(c.req.url).searchParams, `GET ${name}`));
      const request = { window, now: deps.clock(), pricing: c.get("loaded").config.pricing };
      const report = await read(deps.ledgerStore, request).catch((cause: unknown) => {
        // A store that knows why it cannot be read says so; any other failure is passing.
        if (cause instanceof AppError) throw cause;
        throw new AppError(503, "stats_unavailable", "The savings ledger could not be read just now; try again.", {
          cause,
        });
      });
      return jsonResponse(report, 200, { "cache-control": "no-store" });
    };
  route("/v1/stats", {
    GET: ledgerRoute("/v1/stats", (store, request) => stats(store, request.window, request.now, request.pricing)),
  });
  route("/v1/stats/sessions", {
    GET: ledgerRoute("/v1/stats/sessions", (store, request) => store.sessions(request)),
  });
}

/** The dashboard's page and script. */
function dashboardRoutes(route: Route, deps: AppDeps): void {
  // The page holds no data (it reads /v1/stats with the caller's token), so it is served to anyone.
  const page = (body: () => string, type: string) => () =>
    new Response(body(), {
      headers: {
        "content-type": type,
        "content-security-policy": DASHBOARD_CSP,
        "x-content-type-options": "nosniff",
        "cache-control": "no-cache",
      },
    });
  const dashboardAsksToken = () => !takesAnonymousCalls(deps.config());
  route("/dashboard", { GET: page(() => dashboardHtml(dashboardAsksToken()), "text/html; charset=utf-8") });
  route("/dashboard/app.js", { GET: page(() => DASHBOARD_JS, "text/javascript; charset=utf-8") });
}

/** What a tool run gets from the request: the ports, the configuration, the request id and the caller. */
function toolContext(c: Context<Env>, deps: AppDeps): ToolContext {
  const { config, secrets } = c.get("loaded");
  // Hashed only by a tool that keeps session state, at most once: a search or a cache hit never pays for it.
  let caller: Promise<string> | undefined;
  const callerOnce = () => (caller ??= callerOf(c.req.header("authorization") ?? null));
  return { ports: deps, config, secrets, requestId: c.get("requestId"), caller: callerOnce };
}

/** A 200 JSON answer with `headers` and this request's id, built once (BuiltResponse). */
function builtJson(c: Context<Env>, body: unknown, headers: Readonly<Record<string, string>> = {}): Response {
  const all = { ...headers, "x-request-id": c.get("requestId") };
  const response = jsonResponse(body, 200, all);
  c.set("built", { response, headers: all });
  return response;
}

/**
 * A tool's validated input from a JSON body: a repeat of a small body a `sharedInput` tool has
 * seen (the same text, the same values of the headers it reads) gets the input made of it before.
 */
async function jsonInput(tool: ToolDefinition, request: Request, inputs: InputMemo): Promise<unknown> {
  const text = await readJsonText(request, tool.bodyLimit);
  const key = tool.sharedInput
    ? inputs.key(
        tool.name,
        (tool.requestHeaders?.names ?? []).map((name) => request.headers.get(name)),
        text,
      )
    : null;
  const known = key === null ? undefined : inputs.get(key);
  if (known !== undefined) return known;
  const input = parseRequest(tool.input, withHeaderFields(tool, request.headers, parseJsonText(text)));
  return key === null ? input : inputs.set(key, input);
}

/** Each tool's POST route, and `/mcp`, which offers the MCP tools. */
function toolRoutes(route: Route, deps: AppDeps): void {
  const inputs = new InputMemo();
  for (const tool of TOOLS) {
    route(tool.path, {
      POST: async (c) => {
        const upload = tool.upload && isMultipart(c.req.header("content-type") ?? null) ? tool.upload : null;
        const answer = upload
          ? await readMultipart(c.req.raw, tool.bodyLimit, upload).then(({ fields, file }) =>
              tool.run(toolContext(c, deps), parseRequest(upload.fields, fields), file),
            )
          : await tool.run(toolContext(c, deps), await jsonInput(tool, c.req.raw, inputs));
        c.set("logFields", answer.log);
        return builtJson(c, answer.body, answer.headers);
      },
    });
  }

  route("/mcp", {
    POST: (c) => handleMcpPost(c.req.raw, toolContext(c, deps), MCP_TOOLS, deps.version),
  });
}

/** A 404 naming the route, and every error rendered in the api.md shape (a 405 with its `Allow`). */
function handleErrors(app: Hono<Env>): void {
  app.notFound((c) =>
    errorResponse(
      new AppError(
        404,
        "not_found",
        `No route ${c.req.method} ${new URL(c.req.url).pathname}; see GET /openapi.json for the routes.`,
      ),
    ),
  );

  app.onError((error, c) => {
    // Logged once, by requestLog, from c.error.
    const appError =
      error instanceof AppError
        ? error
        : new AppError(
            500,
            "internal_error",
            "The service failed unexpectedly; try again, and report the request id if it persists.",
            { cause: error },
          );
    const headers: Record<string, string> = { "x-request-id": c.get("requestId") ?? crypto.randomUUID() };
    if (appError.code === "method_not_allowed") headers.allow = (appError.details as { allow: string }).allow;
    return errorResponse(appError, headers);
  });
}
