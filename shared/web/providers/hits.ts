/**
 * Turns whatever a search backend returned into our ranked hits: web links only, no repeats,
 * at most `count`, positions 1..n in the provider's order.
 */
import type { SearchHit } from "./provider.types";

export interface HitCandidate {
  title?: unknown;
  url?: unknown;
  description?: unknown;
}

export function rankHits(candidates: readonly HitCandidate[], count: number): SearchHit[] {
  const hits: SearchHit[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (hits.length >= count) break;
    const url = webUrl(candidate.url);
    if (!url || seen.has(url)) continue;
    seen.add(url);
    hits.push({
      title: text(candidate.title) || url,
      url,
      description: text(candidate.description),
      position: hits.length + 1,
    });
  }
  return hits;
}

/** Agents follow these links, so anything but http(s) (javascript:, data:, relative) is dropped. */
function webUrl(value: unknown): string | null {
  if (typeof value !== "string") return null;
  try {
    const url = new URL(value.trim());
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

function text(value: unknown): string {
  return typeof value === "string" ? value.replace(/\s+/g, " ").trim() : "";
}
