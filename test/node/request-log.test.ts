/**
 * The request log (shared/app/request-log.ts) on a real Hono app: one line per request, a stack
 * only for a real bug, and never a query string, even one quoted inside an error message.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { AppError, providerError } from "../../shared/http/errors";
import { requestLog } from "../../shared/app/request-log";
import type { Logger } from "../../shared/ports";

function appWithLog() {
  const lines: { level: string; event: string; fields: Record<string, unknown> }[] = [];
  const log: Logger = {
    info: (event, fields = {}) => lines.push({ level: "info", event, fields }),
    warn: (event, fields = {}) => lines.push({ level: "warn", event, fields }),
    error: (event, fields = {}) => lines.push({ level: "error", event, fields }),
  };
  let now = 1_000;
  const app = new Hono<{ Variables: { requestId: string } }>();
  app.use("*", async (c, next) => {
    c.set("requestId", "r1");
    await next();
  });
  app.use(
    "*",
    requestLog(log, () => (now += 7)),
  );
  app.get("/ok", (c) => c.json({ ok: true }));
  // What the proxy does with a provider it cannot reach, and /healthz with a config error: an answer, not a throw.
  app.get("/answered-502", (c) => c.json({ type: "error", error: { type: "api_error" } }, 502));
  app.get("/provider", () => {
    throw providerError("tavily", "HTTP 500", {
      reason: "TypeError: fetch failed for https://api.tavily.test/search?api_key=tvly-SECRET",
    });
  });
  app.get("/bug", () => {
    throw new TypeError("cannot read x of undefined at https://internal.test/a?token=abc123");
  });
  app.onError((error) => new Response("x", { status: error instanceof AppError ? error.status : 500 }));
  return { app, lines };
}

describe("requestLog", () => {
  it("withholds a path shaped like a secret (a bot token in a proxied path) and cuts a long one to 200 characters", async () => {
    const { app, lines } = appWithLog();
    await app.request("/anthropic/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/getMe");
    await app.request(`/v1/${"a".repeat(400)}`);
    await app.request("/ok");
    expect(lines.map((line) => line.fields.route)).toEqual([
      "(withheld: shaped like a secret)",
      `/v1/${"a".repeat(196)}`,
      "/ok",
    ]);
    expect(JSON.stringify(lines)).not.toContain("ABC-DEF1234");
  });

  it("writes one info line for a success, without the query", async () => {
    const { app, lines } = appWithLog();
    await app.request("/ok?api_key=sk-live-123");
    expect(lines).toEqual([
      {
        level: "info",
        event: "request",
        fields: { request_id: "r1", method: "GET", route: "/ok", status: 200, ms: 7 },
      },
    ]);
  });

  it("writes one warn line for an expected failure: its code and cause, URLs cut before the query, no stack", async () => {
    const { app, lines } = appWithLog();
    await app.request("/provider");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "warn",
      fields: {
        status: 502,
        code: "provider_error",
        message: "The tavily provider failed: HTTP 500. Try again later or configure another provider.",
      },
    });
    expect(lines[0]!.fields.cause).toContain("https://api.tavily.test/search?[query removed]");
    expect(JSON.stringify(lines)).not.toContain("tvly-SECRET");
    expect(lines[0]!.fields.stack).toBeUndefined();
  });

  it("writes one warn line for a 5xx answered without throwing (a provider the proxy could not reach)", async () => {
    const { app, lines } = appWithLog();
    await app.request("/answered-502");
    expect(lines).toMatchObject([{ level: "warn", fields: { route: "/answered-502", status: 502 } }]);
  });

  it("writes one error line with a stack for a real bug, without the query", async () => {
    const { app, lines } = appWithLog();
    await app.request("/bug");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", fields: { status: 500, code: "internal_error" } });
    expect(String(lines[0]!.fields.stack)).toContain("TypeError");
    expect(JSON.stringify(lines)).not.toContain("abc123");
  });
});
