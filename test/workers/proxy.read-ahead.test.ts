/**
 * The session's record read ahead (shared/proxy/proxy.service.ts, `readAhead`): a caller that
 * names its session (X-Session-Id) and sends images has its record read beside the body's parse.
 * What the record holds (the retirement memory, the shadow) must be the session's own, so a named
 * session is transformed turn by turn exactly as the same session keyed by its first message,
 * whose record is read after the parse: the same X-Edge headers, the same counts in the ledger
 * (images retired from a request that still carried them, the shadow's as-sent tokens).
 */
import { describe, expect, it } from "vitest";
import { encodePng, screenshotPixels, toBase64 } from "../fixtures/images";
import { screenshotCall, uniqueToken, withLedger } from "./helpers";

const MODEL = "claude-sonnet-4-5";

/**
 * Turn `turns` of a screenshot session: the task, then a screenshot call and its image per turn,
 * with Hermes's breakpoints (the system prompt and the last 3 messages), so the provider's cache
 * and the session's memory of it count.
 */
function turn(task: string, shots: readonly string[], turns: number) {
  const messages: { role: string; content: any }[] = [{ role: "user", content: [{ type: "text", text: task }] }];
  for (let i = 0; i < turns; i++) messages.push(...screenshotCall(`t${i}`, shots[i]!));
  for (const message of messages.slice(-3))
    message.content[message.content.length - 1] = {
      ...message.content[message.content.length - 1],
      cache_control: { type: "ephemeral" },
    };
  const system = [{ type: "text", text: "You operate a desktop.", cache_control: { type: "ephemeral" } }];
  return { model: MODEL, max_tokens: 64, system, messages };
}

/** What the proxy says it did to a request. */
const edgeHeaders = (response: Response) =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith("x-edge-") && name !== "x-edge-session"));

describe("a session's record read ahead of the parse", () => {
  it("transforms a session named by X-Session-Id turn by turn as the same session keyed by its first message", async () => {
    const tag = uniqueToken();
    const shots: string[] = [];
    for (let i = 0; i < 30; i++)
      shots.push(toBase64(await encodePng(screenshotPixels(400, 300, 700 + i), 400, 300, 3)));
    const named = { ledger: withLedger(), headers: [] as Record<string, string>[] };
    const derived = { ledger: withLedger(), headers: [] as Record<string, string>[] };
    for (let turns = 1; turns <= 30; turns++) {
      // The two sessions differ by one letter of the task, so their prompts weigh the same.
      const a = await named.ledger.send("/anthropic/v1/messages", turn(`task A ${tag}`, shots, turns), {
        "x-api-key": "k",
        "x-session-id": `named-${tag}`,
      });
      const b = await derived.ledger.send("/anthropic/v1/messages", turn(`task B ${tag}`, shots, turns), {
        "x-api-key": "k",
      });
      expect([a.response.status, b.response.status]).toEqual([200, 200]);
      named.headers.push(edgeHeaders(a.response));
      derived.headers.push(edgeHeaders(b.response));
    }
    expect(named.headers).toEqual(derived.headers);
    const counts = await named.ledger.totals();
    // The session is long enough for its memory to matter: screenshots were retired.
    expect(counts.images_retired).toBeGreaterThan(0);
    expect(counts).toEqual(await derived.ledger.totals());
  });
});
