/**
 * The per-session repeat cap of natively embedded images (docs/vision.md, "The repeat cap"): which cap
 * applies to a caller, the atomic reserve/release ledger, and the exact refusal. The ledger runs
 * where a session's counters live (a Durable Object per session on Workers, the process on Deno).
 */
import { AppError } from "../http/errors";
import type { Reservation } from "../ports";
import { type Caller, capSetting, effectiveCap } from "../config/repeat-cap.rule";

/** Counters are dropped after this much inactivity in a session. */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;

/** Storage a ledger needs: synchronous-looking get/put of small counters. */
export interface CounterStore {
  get(key: string): Promise<number | undefined>;
  put(key: string, value: number): Promise<void>;
}

/**
 * The ledger of one session. Callers must serialise calls per session (a Durable Object does
 * this by itself: storage awaits hold other requests at its input gate).
 */
export async function reserveSlot(store: CounterStore, imageKey: string, cap: number | null): Promise<Reservation> {
  const count = (await store.get(imageKey)) ?? 0;
  if (cap !== null && count >= cap) return { ok: false, count };
  await store.put(imageKey, count + 1);
  return { ok: true, count: count + 1 };
}

export async function releaseSlot(store: CounterStore, imageKey: string): Promise<void> {
  const count = (await store.get(imageKey)) ?? 0;
  if (count > 0) await store.put(imageKey, count - 1);
}

/** The 409 of api.md: its words, with the cap that applied. */
export function embedCapReached(count: number, configured: number | null, caller: Caller): AppError {
  const cap = effectiveCap(configured, caller) ?? 0;
  // The setting as GET /v1/config shows it: unset names the default that applied, never "= 3".
  const setting = capSetting(configured);
  return new AppError(
    409,
    "embed_cap_reached",
    `vision_analyze refused: this image has already been loaded into context ${count} time(s) in this session (region crops of the same image count too), and every native load re-sends the full image on each later API call. Answer from what you can already see, or ask the user. (${setting})`,
    { details: { embed_count: count, embed_cap: cap } },
  );
}
