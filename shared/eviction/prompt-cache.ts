/**
 * The one model of a provider's prompt cache: how it reads and writes one request given the
 * entries earlier requests left. Anthropic's `cache_control` (entries at breakpoints, read from a
 * breakpoint or within `lookback` blocks before one, expiring idle), OpenAI from GPT-5.6 (the same
 * with no lookback limit) and OpenAI's automatic prefix caching (the longest cached prefix, in
 * `step`-token steps past the minimum). The replay (cli/replay) and the proxy's shadow of a
 * session as the agent sent it (shared/proxy/shadow.ts) both call `promptCacheRequest`, so what
 * the replay measures and what the ledger estimates are one model. Pure: the entries are handed
 * in and updated in place; every rule is an input (the model table's, docs/eviction.md).
 */

/** How the cache is addressed (the model table's `BreakpointStyle`, as far as the model tells them apart). */
export type PromptCacheKind = "breakpoints" | "prefix";

export interface PromptCacheRules {
  readonly kind: PromptCacheKind;
  /** breakpoints: blocks before a breakpoint searched for an earlier entry (Infinity: no limit). */
  readonly lookback: number;
  /** Shortest prefix the provider caches (tokens). */
  readonly minCacheableTokens: number;
  /** prefix: reads grow in steps of this many tokens past the minimum. */
  readonly step: number;
  /** prefix: how long an entry is kept after its last use (ms). */
  readonly ttlMs: number;
}

/** An entry: when it was last used and how long it lives after that. */
export interface PromptCacheEntry {
  at: number;
  ttlMs: number;
}

/** One block of a request: the identity of the prefix up to and including it, and its tokens. */
export interface PromptBlock {
  readonly key: string;
  readonly tokens: number;
}

/** A breakpoint: the block it stands on and the TTL its entry is written with. */
export interface PromptBreakpoint {
  readonly index: number;
  readonly ttlMs: number;
}

/** What one request costs the cache, as token positions in the prompt. */
export interface PromptCacheUse {
  /** Tokens `[0, read)` are read from the cache. */
  readonly read: number;
  /** Ranges `[from, to)` written, each at its TTL (ascending, after `read`). */
  readonly writes: readonly { readonly from: number; readonly to: number; readonly ttlMs: number }[];
  /** Tokens of the whole prompt. */
  readonly total: number;
}

const fresh = (entries: Map<string, PromptCacheEntry>, key: string, at: number) => {
  const entry = entries.get(key);
  return entry !== undefined && at - entry.at <= entry.ttlMs;
};

/**
 * One request through the cache: what it reads and writes, with `entries` updated as the provider
 * would leave them (the entry read and every entry written renewed at `at`).
 *
 * @example
 * const entries = new Map();
 * promptCacheRequest(entries, blocks, [{ index: blocks.length - 1, ttlMs: 300_000 }], Date.now(), rules).read // 0: cold
 */
export function promptCacheRequest(
  entries: Map<string, PromptCacheEntry>,
  blocks: readonly PromptBlock[],
  breakpoints: readonly PromptBreakpoint[],
  at: number,
  rules: PromptCacheRules,
): PromptCacheUse {
  const cum: number[] = [];
  let total = 0;
  for (const block of blocks) cum.push((total += block.tokens));
  if (rules.kind === "prefix") {
    let common = 0;
    blocks.forEach((block, i) => {
      if (fresh(entries, block.key, at)) common = cum[i]!;
    });
    const min = rules.minCacheableTokens;
    const read = common >= min ? min + Math.floor((common - min) / rules.step) * rules.step : 0;
    for (const block of blocks) entries.set(block.key, { at, ttlMs: rules.ttlMs });
    // Everything not read is cached for the next request once the prompt passes the minimum.
    return { read, writes: total >= min && total > read ? [{ from: read, to: total, ttlMs: rules.ttlMs }] : [], total };
  }
  // Read: the longest fresh entry at a breakpoint or within `lookback` blocks before one.
  let best = -1;
  for (const b of breakpoints) {
    for (let p = b.index; p >= Math.max(0, b.index - rules.lookback); p--) {
      if (fresh(entries, blocks[p]!.key, at)) {
        best = Math.max(best, p);
        break;
      }
    }
  }
  const read = best >= 0 ? cum[best]! : 0;
  if (best >= 0) entries.get(blocks[best]!.key)!.at = at;
  // Write: an entry at every breakpoint whose prefix is long enough, each range at the TTL of the
  // breakpoint that ends it; breakpoints inside the read prefix are renewed at no write cost.
  const writes: { from: number; to: number; ttlMs: number }[] = [];
  let from = read;
  for (const b of [...breakpoints].sort((x, y) => x.index - y.index)) {
    if (cum[b.index]! < rules.minCacheableTokens) continue;
    entries.set(blocks[b.index]!.key, { at, ttlMs: b.ttlMs });
    if (b.index > best && cum[b.index]! > from) {
      writes.push({ from, to: cum[b.index]!, ttlMs: b.ttlMs });
      from = cum[b.index]!;
    }
  }
  return { read, writes, total };
}

/**
 * The entries still fresh at `at`, the most recently used first and, among those used together,
 * the latest made first (a longer prefix of a growing conversation), at most `max` of them.
 */
export function keptEntries(
  entries: Map<string, PromptCacheEntry>,
  at: number,
  max: number,
): [string, PromptCacheEntry][] {
  return [...entries]
    .reverse()
    .filter(([, entry]) => at - entry.at <= entry.ttlMs)
    .sort((a, b) => b[1].at - a[1].at)
    .slice(0, max);
}
