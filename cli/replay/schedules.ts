/**
 * The best schedule that exists, for a session where `cost` misses a target: every choice of one
 * or two requests at which to retire down to the floor (the front marker managed, as `cost` does),
 * replayed, with what each costs and how far it stands above hermes if the session were cut short
 * at any request from its first move on (what a strategy told nothing of the future risks).
 */
import { DEFAULT_LIMITS, KEEP_FLOOR } from "../../shared/eviction/policy";
import type { CacheModel, Prices, ReplayRequest } from "./cache.models";
import { replay } from "./compare";
import { batchedPolicy, type ReplayPolicy } from "./rivals";

/** Retire down to `floor` tool images at the given requests (0-based) and nowhere else, marker at the front. */
export function scheduledPolicy(moves: ReadonlySet<number>, floor = KEEP_FLOOR): ReplayPolicy {
  let front = 0;
  return (request, context) => {
    const ids: string[] = [];
    const first: number[] = [];
    request.forEach((segment, i) => {
      if (segment.image?.kind === "tool" && !ids.includes(segment.image.carrier)) {
        ids.push(segment.image.carrier);
        first.push(i);
      }
    });
    const previous = front;
    if (moves.has(context.index)) front = Math.max(front, ids.length - floor);
    const markerAt = previous < first.length ? first[previous]! - 1 : undefined;
    return {
      retired: new Set(ids.slice(0, front)),
      ...(markerAt !== undefined && markerAt >= 0 ? { marker: markerAt } : {}),
      managed: true,
    };
  };
}

/** One schedule: its moves (1-based request numbers), its cost, and its worst excess over hermes at a cut after its last move. */
export interface Schedule {
  readonly moves: number[];
  readonly cost: number;
  /** Max over cuts at or after its first move of (schedule / hermes − 1) on the session cut there. */
  readonly worst_cut_excess: number;
}

/**
 * The cheapest one- and two-move schedules of a session, and the cheapest of those that stay within
 * `promise` (5 %) of hermes at every cut.
 */
export function bestSchedules(
  requests: readonly ReplayRequest[],
  times: readonly number[],
  model: CacheModel,
  prices?: Prices,
  promise = 0.05,
): { best: Schedule; safest: Schedule | null; tried: number } {
  const n = requests.length;
  const hermes = replay(requests, batchedPolicy(DEFAULT_LIMITS), {
    model,
    ...(prices ? { prices } : {}),
    times,
  }).perRequest.map((r) => r.cost);
  const evaluate = (moves: number[]): Schedule => {
    const per = replay(requests, scheduledPolicy(new Set(moves)), {
      model,
      ...(prices ? { prices } : {}),
      times,
    }).perRequest.map((r) => r.cost);
    let costSum = 0;
    let hermesSum = 0;
    let worst = Number.NEGATIVE_INFINITY;
    const start = Math.min(...moves);
    for (let i = 0; i < n; i++) {
      costSum += per[i]!;
      hermesSum += hermes[i]!;
      if (i >= start && hermesSum > 0) worst = Math.max(worst, costSum / hermesSum - 1);
    }
    return { moves: moves.map((m) => m + 1), cost: Math.round(costSum * 1e6) / 1e6, worst_cut_excess: worst };
  };
  let best: Schedule | null = null;
  let safest: Schedule | null = null;
  let tried = 0;
  const consider = (schedule: Schedule) => {
    tried += 1;
    if (best === null || schedule.cost < best.cost) best = schedule;
    if (schedule.worst_cut_excess <= promise && (safest === null || schedule.cost < safest.cost)) safest = schedule;
  };
  for (let a = 1; a < n; a++) {
    consider(evaluate([a]));
    for (let b = a + 1; b < n; b++) consider(evaluate([a, b]));
  }
  return { best: best!, safest, tried };
}
