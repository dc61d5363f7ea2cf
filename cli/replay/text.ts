/**
 * Text-heavy sessions in the replay (docs/eviction.md, "Old text tool results"): a generated
 * research session (./text-sessions.ts) sent five ways — as the agent writes it, under Anthropic's
 * context editing at its defaults, the simplest client-side batch, and the proxy's own decision
 * (`evictRemembering` with the text tool results as carriers) — each through the one prompt-cache
 * model (`shadowStep`, shared/eviction/prompt-cache.ts) under the model table's rules, and priced
 * at the model's prices. The emulator-billed run of the same five ways is
 * test/workers/proxy.tool-results.bill.test.ts.
 */
import { textTokens } from "../../shared/llm/estimate";
import { evictRemembering, outboundEviction, type SessionMemory } from "../../shared/eviction/evict.service";
import { toolResultCandidates } from "../../shared/eviction/tool-results";
import { ANTHROPIC_MESSAGES } from "../../shared/llm/anthropic.messages";
import { billedCost, modelRules } from "../../shared/llm/models.table";
import { type ShadowState, shadowStep } from "../../shared/proxy/shadow";
import { anthropicTextSession, SYSTEM_PROMPT, systemAnd3 } from "./text-sessions";

/** What one way of sending cost over the session. */
export interface TextWayReport {
  readonly usd: number;
  readonly cacheWrites: number;
  readonly cacheReads: number;
}

/** A cleared tool result under context editing and the batch (a short fixed text, as the provider's). */
const CLEARED = "[cleared to save context]";
/** Context editing's defaults (trigger over 100,000 input tokens, keep 3) and the batch's period. */
export const TEXT_RIVALS = Object.freeze({ trigger: 100_000, keep: 3, every: 15 });

function clearOldest(messages: readonly any[], cleared: number): any[] {
  let seen = 0;
  return messages.map((m) =>
    m.role !== "user" || !Array.isArray(m.content)
      ? m
      : {
          ...m,
          content: m.content.map((b: any) =>
            b.type === "tool_result" && seen++ < cleared ? { ...b, content: CLEARED } : b,
          ),
        },
  );
}

/**
 * The five ways over a `turns`-turn page-text session on `model`, a request every `paceMs`.
 * @example replayTextSession(60, "claude-sonnet-4-6").proxy.usd
 */
export function replayTextSession(
  turns: number,
  model: string,
  paceMs = 30_000,
  minChars = 8_192,
): Record<"sent" | "context_editing" | "batch" | "proxy", TextWayReport> {
  const rules = modelRules("anthropic", model);
  const system = [{ type: "text", text: SYSTEM_PROMPT, cache_control: { type: "ephemeral" } }];
  let editing = false;
  let batchFront = 0;
  let memory: SessionMemory | null = null;
  const ways: Record<string, (messages: any[], turn: number, at: number) => any[]> = {
    sent: (m) => m,
    context_editing: (m, turn) => {
      editing ||= textTokens(m) + textTokens(SYSTEM_PROMPT) > TEXT_RIVALS.trigger;
      return editing ? clearOldest(m, turn - TEXT_RIVALS.keep) : m;
    },
    batch: (m, turn) => {
      if (turn % TEXT_RIVALS.every === 0) batchFront = turn - TEXT_RIVALS.keep;
      return clearOldest(m, batchFront);
    },
    proxy: (m, _turn, at) => {
      const { evict, planning } = outboundEviction({
        format: "anthropic",
        messages: m,
        model,
        sessionKey: "replay",
        system,
        movesClientBreakpoint: true,
      });
      const candidates = toolResultCandidates(ANTHROPIC_MESSAGES.toolResults(m), minChars);
      const out = evictRemembering(evict, memory, at, { ...planning, toolResults: candidates });
      memory = out.remember;
      return out.response.messages as any[];
    },
  };
  const states: Record<string, ShadowState | null> = {};
  const reports: Record<string, { usd: number; cacheWrites: number; cacheReads: number }> = {};
  for (let turn = 1; turn <= turns; turn++) {
    const at = turn * paceMs;
    const messages = systemAnd3(anthropicTextSession(turn));
    for (const [way, edit] of Object.entries(ways)) {
      const body = { model, system, messages: edit(messages, turn, at) };
      const { estimate, state } = shadowStep(states[way] ?? null, body, body, at, rules);
      states[way] = state;
      const tokens = (kind: keyof typeof estimate.asSent) =>
        Math.round(estimate.asSent[kind].text + estimate.asSent[kind].image);
      const usage = {
        input: tokens("input"),
        cacheWrite5m: tokens("cacheWrite5m"),
        cacheWrite1h: tokens("cacheWrite1h"),
        cacheRead: tokens("cacheRead"),
        output: 0,
      };
      const report = (reports[way] ??= { usd: 0, cacheWrites: 0, cacheReads: 0 });
      report.usd += billedCost(rules, usage).costUsd;
      report.cacheWrites += usage.cacheWrite5m + usage.cacheWrite1h;
      report.cacheReads += usage.cacheRead;
    }
  }
  return reports as Record<"sent" | "context_editing" | "batch" | "proxy", TextWayReport>;
}
