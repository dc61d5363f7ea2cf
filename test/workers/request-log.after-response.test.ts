/**
 * On Workers a request's log line is written after its response, in `waitUntil` (docs/api.md,
 * "Logs"): the Workers entry has answered before the line exists, and the line is still written
 * once, whole, before the invocation ends; concurrent requests each write their own once.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../workers/index";
import { answerThenLog, workersLogger } from "../../workers/log";
import { testEnv, uniqueToken } from "./helpers";

/** The JSON lines written to console.log/warn/error since the spies were set, with their level. */
function spyLines(): () => Record<string, unknown>[] {
  const spies = (["log", "warn", "error"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation(() => {}),
  );
  return () =>
    spies.flatMap((spy) => spy.mock.calls.map((args) => JSON.parse(String(args[0])) as Record<string, unknown>));
}

const search = (query: string, secret: string) =>
  new Request(`https://service.test/v1/web_search?api_key=${secret}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ query }),
  });

afterEach(() => vi.restoreAllMocks());

describe("the request log on Workers", () => {
  it("a cache hit's line is written after the entry answered, once, with no secret in it", async () => {
    const token = uniqueToken();
    const secret = `sk-live-${token}`;
    const query = `log after response ${token}`;
    const missCtx = createExecutionContext();
    await (await worker.fetch(search(query, secret), testEnv, missCtx)).arrayBuffer();
    await waitOnExecutionContext(missCtx);

    const lines = spyLines();
    const ctx = createExecutionContext();
    const response = await worker.fetch(search(query, secret), testEnv, ctx);
    expect(response.headers.get("x-cache")).toBe("HIT");
    // The entry answered: nothing written yet.
    expect(lines()).toEqual([]);

    await waitOnExecutionContext(ctx);
    expect(lines()).toEqual([
      {
        level: "info",
        event: "request",
        request_id: response.headers.get("x-request-id"),
        method: "POST",
        route: "/v1/web_search",
        status: 200,
        cache: "hit",
        provider: "tavily",
        ms: expect.any(Number),
      },
    ]);
    expect(JSON.stringify(lines())).not.toContain(token);
  });

  it("concurrent requests: none written before all answered, then each line once", async () => {
    const token = uniqueToken();
    const lines = spyLines();
    const contexts = [0, 1, 2].map(() => createExecutionContext());
    const responses = await Promise.all(
      contexts.map((ctx, i) =>
        worker.fetch(
          new Request("https://service.test/healthz", { headers: { "x-request-id": `${token}-${i}` } }),
          testEnv,
          ctx,
        ),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(lines()).toEqual([]);

    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    expect(
      lines()
        .map((line) => line.request_id)
        .sort(),
    ).toEqual([`${token}-0`, `${token}-1`, `${token}-2`]);
  });

  it("a line made after the response (a waitUntil task's) is written at once, the request's own after the response", async () => {
    const lines = spyLines();
    const ctx = createExecutionContext();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let late: Promise<void> = Promise.resolve();
    await answerThenLog(ctx, () => {
      workersLogger.info("answered", { n: 1 });
      late = gate.then(() => workersLogger.warn("late", { n: 2 }));
      ctx.waitUntil(late);
      return new Response("ok");
    });
    expect(lines()).toEqual([]);
    release();
    await late;
    expect(lines()).toEqual([{ level: "warn", event: "late", n: 2 }]);
    await waitOnExecutionContext(ctx);
    expect(lines()).toEqual([
      { level: "info", event: "answered", n: 1 },
      { level: "warn", event: "late", n: 2 },
    ]);
  });
});
