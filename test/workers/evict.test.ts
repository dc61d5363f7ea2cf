/**
 * POST /v1/context/evict through the real Workers entry: the policy's counts in both formats, the
 * outbound copy, uploads untouched, limits per request, the 64 MiB body limit.
 */
import { describe, expect, it } from "vitest";
import { callJson, expectErrorShape, screenshotCall, uniqueToken } from "./helpers";

const screenshot = (i: number) => `iVBORw0KGgo${"A".repeat(400)}${i.toString().padStart(6, "0")}`;

/** An Anthropic conversation with one screenshot per tool result. */
function anthropic(toolImages: number, uploads = 0) {
  const messages: any[] = [];
  for (let u = 0; u < uploads; u++)
    messages.push({
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: screenshot(1000 + u) } },
        { type: "text", text: "look" },
      ],
    });
  for (let i = 0; i < toolImages; i++) messages.push(...screenshotCall(`t${i}`, screenshot(i)));
  return messages;
}

/** An OpenAI conversation with one screenshot per tool message. */
function openai(toolImages: number) {
  const messages: any[] = [{ role: "system", content: "You are a browser agent." }];
  for (let i = 0; i < toolImages; i++) {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${i}`, type: "function", function: { name: "shot", arguments: "{}" } }],
    });
    messages.push({
      role: "tool",
      tool_call_id: `c${i}`,
      content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${screenshot(i)}` } }],
    });
  }
  return messages;
}

const evict = (body: unknown) => callJson("/v1/context/evict", { body });

describe("POST /v1/context/evict", () => {
  it.each([
    [20, 0],
    [21, 8],
    [28, 8],
    [29, 16],
  ])("retires the oldest in batches: %i screenshots → %i retired (both formats)", async (count, retired) => {
    for (const [format, messages] of [
      ["anthropic", anthropic(count)],
      ["openai", openai(count)],
    ] as const) {
      const { status, body } = await evict({ format, messages });
      expect(status).toBe(200);
      expect(body.retired).toBe(retired);
      expect(body.stats.image_blocks_before).toBe(count);
      expect(body.stats.image_blocks_after).toBe(count - retired);
      expect(body.evicted).toHaveLength(retired);
      // The oldest go first: the retired ones are the first `retired` tool messages.
      const firstToolIndex = format === "anthropic" ? 1 : 2;
      expect(body.evicted.map((e: any) => e.message).sort((a: number, b: number) => a - b)).toEqual(
        Array.from({ length: retired }, (_, i) => firstToolIndex + 2 * i),
      );
    }
  });

  it("returns a deterministic text block in place of each retired image and never changes uploads", async () => {
    const messages = anthropic(21, 2);
    const first = await evict({ format: "anthropic", messages });
    const second = await evict({ format: "anthropic", messages });
    expect(JSON.stringify(first.body.messages)).toBe(JSON.stringify(second.body.messages));
    expect(first.body.messages.slice(0, 2)).toEqual(messages.slice(0, 2));
    const retiredMessage = first.body.messages[first.body.evicted[0].message];
    expect(JSON.stringify(retiredMessage)).not.toContain("iVBORw0KGgo");
    expect(first.body.stats.reserved_blocks).toBe(2);
  });

  it("takes per-request limits", async () => {
    const { body } = await evict({ format: "openai", messages: openai(12), limits: { max_blocks: 10, batch: 4 } });
    expect(body.retired).toBe(4);
  });

  it("reports in stats, without failing, when nothing can make the request fit", async () => {
    const messages = [...anthropic(2, 25)];
    const { status, body } = await evict({ format: "anthropic", messages });
    expect(status).toBe(200);
    expect(body.retired).toBe(0);
    expect(body.stats.fits).toBe(false);
    expect(body.stats.reason).toBe("under_ceiling");
    expect(body.stats.problem).toMatch(/user uploads alone carry 25 image blocks/);
  });

  it("refuses an unknown format and bad limits with 400", async () => {
    expect((await evict({ format: "gemini", messages: [] })).status).toBe(400);
    const bad = await evict({ format: "openai", messages: [], limits: { batch: 0 } });
    expect(bad.status).toBe(400);
    expect(expectErrorShape(bad.body).code).toBe("invalid_request");
  });

  it("accepts bodies over 1 MiB (a whole conversation with images) up to 64 MiB", async () => {
    const big = anthropic(3);
    big[1].content[0].content[0].source.data = "A".repeat(3 * 1024 * 1024);
    const { status, body } = await evict({ format: "anthropic", messages: big });
    expect(status).toBe(200);
    expect(body.stats.bytes_before).toBeGreaterThan(3 * 1024 * 1024);
    const over = await callJson("/v1/context/evict", { raw: "x".repeat(64 * 1024 * 1024 + 1) });
    expect(over.status).toBe(413);
  });
});

describe("POST /v1/context/evict: strategy cost", () => {
  it("keeps a session's memory to its caller: another API token under the same session_id neither reads nor resets it", async () => {
    const session_id = `evict-${uniqueToken()}`;
    const tokens = { API_TOKENS: "tok-alice-0123456789,tok-bob-9876543210" };
    const as = (token: string) => (body: unknown) =>
      callJson("/v1/context/evict", { body, headers: { authorization: `Bearer ${token}` }, vars: tokens });
    const alice = as("tok-alice-0123456789");
    const bob = as("tok-bob-9876543210");
    const cold = await alice({
      format: "anthropic",
      messages: anthropic(12),
      strategy: "cost",
      session_id,
      last_request_at: new Date(Date.now() - 10 * 60_000).toISOString(),
    });
    expect(cold.body.retired).toBe(9);
    // Bob, another caller, happens to use the same session id.
    const other = await bob({ format: "anthropic", messages: [], strategy: "cost", session_id });
    expect(other.status).toBe(200);
    const next = await alice({ format: "anthropic", messages: anthropic(13), strategy: "cost", session_id });
    expect(next.body.retired).toBe(9); // Alice's front held, as on the same call without Bob's
  });

  const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

  it('defaults to hermes: the same answer with and without "strategy": "hermes"', async () => {
    const messages = anthropic(21);
    const plain = await evict({ format: "anthropic", messages });
    const hermes = await evict({ format: "anthropic", messages, strategy: "hermes" });
    expect(hermes.body).toEqual(plain.body);
    expect(plain.body.retired).toBe(8);
  });

  it("says which rule decided, and what it applied", async () => {
    const { status, body } = await evict({
      format: "anthropic",
      messages: anthropic(25),
      strategy: "cost",
      provider: "anthropic",
    });
    expect(status).toBe(200);
    expect(body.stats.strategy).toBe("cost");
    expect(["under_ceiling", "held", "ceiling", "price", "cold_cache"]).toContain(body.stats.reason);
    // In words and numbers: one sentence, and this request's cache writes under the move and under hermes.
    expect(body.stats.explanation).toMatch(/^(Retired|Nothing retired|Kept)/);
    expect(body.stats.estimate.model).toBe("anthropic default");
    expect(body.stats.estimate.hermes.retired).toBe(8);
    expect(body.stats.estimate.cache_write_usd).toBeCloseTo((body.stats.estimate.cache_write_tokens * 3.75) / 1e6, 5);
    // These fixtures' images have no readable header, so Anthropic's 100-image ceiling is not assumed.
    expect(body.stats.limits.max_blocks).toBe(20);
    expect(body.stats.image_blocks_after).toBeLessThanOrEqual(20);
  });

  it("prices with the operator's pricing.models, as /v1/stats does", async () => {
    const body = { format: "anthropic", messages: anthropic(25), strategy: "cost", model: "claude-sonnet-4-5" };
    const listed = (await evict(body)).body;
    // Ten times the public input and write prices for this model only.
    const vars = { PRICING_MODELS: JSON.stringify({ "claude-sonnet-4-5": { input: 30, cacheWrite5m: 37.5 } }) };
    const priced = (await callJson("/v1/context/evict", { body, vars })).body;
    expect(priced.stats.estimate.cache_write_tokens).toBe(listed.stats.estimate.cache_write_tokens);
    expect(listed.stats.estimate.cache_write_usd).toBeCloseTo(
      (listed.stats.estimate.cache_write_tokens * 3.75) / 1e6,
      5,
    );
    expect(priced.stats.estimate.cache_write_usd).toBeCloseTo(
      (priced.stats.estimate.cache_write_tokens * 37.5) / 1e6,
      5,
    );
    expect(priced.stats.estimate.cache_write_tokens).toBeGreaterThan(0);
  });

  it("judges a retirement over requests_left when the agent says how long the session will last", async () => {
    const session_id = `told-${crypto.randomUUID()}`;
    const guessed = await evict({
      format: "anthropic",
      messages: anthropic(14),
      strategy: "cost",
      session_id: `${session_id}-guess`,
    });
    expect(guessed.body.retired).toBe(0);
    const lasting = await evict({
      format: "anthropic",
      messages: anthropic(14),
      strategy: "cost",
      session_id,
      requests_left: 200,
    });
    expect(lasting.status).toBe(200);
    expect(lasting.body.retired).toBe(11);
    expect(lasting.body.stats.reason).toBe("price");
    expect(lasting.body.stats.image_blocks_after).toBe(3);
  });

  it.each([
    ["a budget that runs out (20 requests for 45)", (n: number) => Math.max(0, 20 - n)],
    ["a budget renewed per task (20 requests each)", (n: number) => 19 - ((n - 1) % 20)],
    ["a client that sends it only now and then", (n: number) => (n % 3 === 0 ? 60 - n : undefined)],
  ])(
    "a growing session told requests_left as %s: the front never moves back, and every move says which rule made it",
    async (_name, left) => {
      const session_id = `grow-${crypto.randomUUID()}`;
      let front = 0;
      for (let n = 1; n <= 45; n++) {
        const requests_left = left(n);
        const { status, body } = await evict({
          format: "anthropic",
          messages: anthropic(n),
          strategy: "cost",
          session_id,
          ...(requests_left === undefined ? {} : { requests_left }),
        });
        expect(status).toBe(200);
        expect(body.retired).toBeGreaterThanOrEqual(front);
        if (body.retired > front) expect(["price", "ceiling", "cold_cache"]).toContain(body.stats.reason);
        else expect(["held", "under_ceiling"]).toContain(body.stats.reason);
        front = body.retired;
      }
      expect(front).toBeGreaterThan(0);
    },
  );

  it("remembers the session's front in the cache store: a cold-cache retirement stays retired on the next, warm call", async () => {
    const session_id = `evict-${crypto.randomUUID()}`;
    const cold = await evict({
      format: "anthropic",
      messages: anthropic(12),
      strategy: "cost",
      session_id,
      last_request_at: minutesAgo(10),
    });
    expect(cold.body.stats.reason).toBe("cold_cache");
    expect(cold.body.retired).toBe(9);
    const next = await evict({ format: "anthropic", messages: anthropic(13), strategy: "cost", session_id });
    expect(next.body.stats.cold_cache).toBe(false);
    expect(next.body.retired).toBe(9);
    expect(next.body.stats.reason).toBe("held");
    // Another session with the same conversation remembers nothing.
    const other = await evict({
      format: "anthropic",
      messages: anthropic(13),
      strategy: "cost",
      session_id: `${session_id}-other`,
    });
    expect(other.body.retired).toBe(0);
  });

  it("with manage_cache, puts one breakpoint before the front and says where", async () => {
    const { body } = await evict({
      format: "anthropic",
      messages: anthropic(25),
      strategy: "cost",
      manage_cache: true,
    });
    const at = body.stats.cache_marker;
    expect(at).toBeDefined();
    expect(body.messages[at.message].content[at.block].cache_control).toEqual({ type: "ephemeral" });
    const marked = JSON.stringify(body.messages).split('"cache_control"').length - 1;
    expect(marked).toBe(1);
  });

  it("turns a retired image into its description", async () => {
    const messages = anthropic(21);
    const descriptions = [{ message: 1, block: 0, part: 0, text: "a search results page" }];
    const { body } = await evict({ format: "anthropic", messages, descriptions });
    expect(body.evicted[0]).toMatchObject({ message: 1, block: 0, part: 0 });
    expect(body.messages[1].content[0].content[0].text).toContain("a search results page");
  });

  it.each([
    ["an unknown strategy", { format: "anthropic", messages: [], strategy: "fastest" }, "strategy"],
    ["a cost-only field with hermes", { format: "anthropic", messages: [], session_id: "s" }, "session_id"],
    [
      "manage_cache that is not a boolean",
      { format: "openai", messages: [], strategy: "cost", manage_cache: "yes" },
      "manage_cache",
    ],
    [
      "last_request_at that is not an ISO time",
      { format: "anthropic", messages: [], strategy: "cost", last_request_at: "yesterday" },
      "last_request_at",
    ],
    [
      "other_breakpoints over 4",
      { format: "anthropic", messages: [], strategy: "cost", other_breakpoints: 5 },
      "other_breakpoints",
    ],
    ["requests_left with hermes", { format: "anthropic", messages: [], requests_left: 40 }, "requests_left"],
    [
      "a negative requests_left",
      { format: "anthropic", messages: [], strategy: "cost", session_id: "s", requests_left: -1 },
      "requests_left",
    ],
    [
      "requests_left without session_id",
      { format: "anthropic", messages: [], strategy: "cost", requests_left: 40 },
      "requests_left",
    ],
    [
      "a description of a message not sent",
      { format: "anthropic", messages: [], descriptions: [{ message: 3, block: 0, text: "x" }] },
      "descriptions",
    ],
    [
      "an empty description",
      {
        format: "anthropic",
        messages: [{ role: "user", content: "hi" }],
        descriptions: [{ message: 0, block: 0, text: "" }],
      },
      "descriptions",
    ],
  ])("refuses %s with a 400 naming the field", async (_name, request, field) => {
    const { status, body } = await evict(request);
    expect(status).toBe(400);
    const error = expectErrorShape(body);
    expect(error.code).toBe("invalid_request");
    expect((error.details as Array<{ path: unknown[] }>).some((d) => d.path[0] === field)).toBe(true);
  });
});
