/**
 * "Did you mean …?": the name closest to a mistyped one. The configuration loader uses it for a
 * misspelled setting and the request parser for a field a route does not take, so both guess alike.
 */

/**
 * The candidate at most `within` edits from `given` (the closest; the first of equals), or null.
 * @example nearest("max_agee", ["max_age", "store"], 2) // "max_age"
 */
export function nearest(given: string, candidates: readonly string[], within: number): string | null {
  let best: string | null = null;
  let bestDistance = within + 1;
  for (const candidate of candidates) {
    const distance = editDistance(given, candidate, bestDistance);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance of `a` and `b`, or `limit` once it is known to be at least that. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit || a.length > 100 || b.length > 100) return limit;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    if (Math.min(...row) >= limit) return limit;
    previous = row;
  }
  return Math.min(previous[b.length]!, limit);
}
