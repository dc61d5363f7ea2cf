/**
 * The replay measures what the route does: the same sessions, generated and logged, run through
 * the replay's cost policy and, request by request, through POST /v1/context/evict on the real
 * Workers entry (KV session memory included) give the same decisions: carriers retired, the rule,
 * and the block the front marker stands on.
 */
import { describe, expect, it } from "vitest";
import { ANTHROPIC_CACHE_MODEL, type ReplayRequest, type RequestBody } from "../../cli/replay/cache.models";
import { costOptions, replay } from "../../cli/replay/compare";
import { parseSessionLine } from "../../cli/replay/jsonl";
import { costPolicy, costRequestFor, routeView } from "../../cli/replay/rivals";
import { generateSession, requestsFromTurns, requestTimes } from "../../cli/replay/sessions";
import { anthropicScreenshots } from "../node/eviction.fixtures";
import { callJson } from "./helpers";

interface Decision {
  retired: number;
  rule: string | undefined;
  marker: number | undefined;
}

/** Run a session through the replay and through the route, and return both lists of decisions. */
async function bothWays(
  requests: readonly ReplayRequest[],
  times: readonly number[],
  bodies?: RequestBody[],
): Promise<{ replayed: Decision[]; routed: Decision[] }> {
  const options = costOptions({ model: ANTHROPIC_CACHE_MODEL }, "guess");
  const report = replay(requests, costPolicy(options), {
    model: ANTHROPIC_CACHE_MODEL,
    times,
    ...(bodies ? { bodies } : {}),
  });
  const replayed = report.perRequest.map((r) => ({ retired: r.retired, rule: r.rule, marker: r.marker }));
  const session = `differential-${crypto.randomUUID()}`;
  const routed: Decision[] = [];
  for (let index = 0; index < requests.length; index++) {
    const context = { index, at: times[index]!, count: requests.length, ...(bodies ? { body: bodies[index]! } : {}) };
    const view = routeView(requests[index]!, context);
    // The route keeps its own clock; the session's pauses reach it as last_request_at.
    const gap = index === 0 ? undefined : times[index]! - times[index - 1]!;
    const body = {
      ...costRequestFor(view, context, options, session),
      ...(gap === undefined ? {} : { last_request_at: new Date(Date.now() - gap).toISOString() }),
    };
    const { status, body: answer } = await callJson("/v1/context/evict", { body });
    expect(status).toBe(200);
    const marker = answer.stats.cache_marker as { message: number; block: number } | undefined;
    routed.push({
      retired: answer.retired,
      rule: answer.stats.reason,
      marker: marker === undefined ? undefined : view.segmentAt.get(`${marker.message}/${marker.block}`),
    });
  }
  return { replayed, routed };
}

describe("route and replay decide alike, request by request", () => {
  it("a generated session: 36 screenshots in 50 turns with an 8-minute pause every 15 requests (moves by ceiling, price and a cold cache)", async () => {
    const requests = requestsFromTurns(generateSession({ turns: 50, images: 36, imageBytes: 2_000 }), 4_000);
    const times = requestTimes(requests.length, { pauseEvery: 15, pauseMinutes: 8 });
    const { replayed, routed } = await bothWays(requests, times);
    expect(routed).toEqual(replayed);
    // The session exercises more than one rule, and the front moves.
    expect(new Set(replayed.map((d) => d.rule)).size).toBeGreaterThanOrEqual(3);
    expect(replayed[replayed.length - 1]!.retired).toBeGreaterThan(0);
    expect(replayed.some((d) => d.marker !== undefined)).toBe(true);
  });

  it("a logged session: request bodies as a client sends them (tool_use / tool_result with real PNG headers), read from JSONL", async () => {
    const full = anthropicScreenshots(30, { width: 1280, height: 800 }, 3_000);
    // Request i carries the history up to the i-th tool result (31 requests, the first a plain prompt).
    const lines = Array.from({ length: 31 }, (_, i) =>
      JSON.stringify({ format: "anthropic", system: "You are a browser agent.", messages: full.slice(0, 2 * i + 1) }),
    );
    const parsed = lines.map((line) =>
      parseSessionLine(line, "anthropic", { imageTokens: 1_500, charsPerToken: 4 }, { tokens: 1_500, bytes: 3_000 }),
    );
    const requests = parsed.map((p) => (p.kind === "request" ? p.segments : []));
    const bodies = parsed.map((p) => (p.kind === "request" ? p.body : { format: "anthropic" as const, body: {} }));
    const times = requestTimes(requests.length, { pauseEvery: 12, pauseMinutes: 6 });
    const { replayed, routed } = await bothWays(requests, times, bodies);
    expect(routed).toEqual(replayed);
    expect(replayed[replayed.length - 1]!.retired).toBeGreaterThan(0);
  });
});
