/**
 * The replay's page-text sessions (`npm run replay -- --text`, cli/replay/text.ts): the five ways
 * through the one prompt-cache model meet the targets the emulator-billed run meets
 * (docs/eviction.md, "Old text tool results"), and a short session retires nothing.
 */
import { describe, expect, it } from "vitest";
import { replayTextSession } from "../../cli/replay/text";

describe("npm run replay -- --text", () => {
  it("60 turns: cost at least 45 % below as sent, 40 % below context editing, no dearer than the every-15 batch", () => {
    const report = replayTextSession(60, "claude-sonnet-4-6");
    expect(report.proxy.usd).toBeLessThanOrEqual(0.55 * report.sent.usd);
    expect(report.proxy.usd).toBeLessThanOrEqual(0.6 * report.context_editing.usd);
    expect(report.proxy.usd).toBeLessThanOrEqual(report.batch.usd);
  });

  it("10 turns: nothing pays back a rewrite, so the proxy costs what as sent costs", () => {
    const report = replayTextSession(10, "claude-sonnet-4-6");
    expect(report.proxy.cacheReads).toBe(report.sent.cacheReads);
    expect(report.proxy.usd).toBeCloseTo(report.sent.usd, 6);
  });
});
