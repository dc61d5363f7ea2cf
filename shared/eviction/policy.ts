/**
 * The eviction policy: the only home of the ceilings (20 image blocks, 24,000,000 bytes), the batch
 * (8) and the floor (3), and of the retire-count arithmetic of spec/eviction.md. Both message
 * formats and the replay call it, so a change of policy is made here once. Pure arithmetic over
 * block and byte counts: no messages, no runtime.
 *
 * Why batches: retiring an image rewrites the message that carried it, deep inside the provider's
 * cached prefix, and the provider re-writes everything after it. Moving the retirement front once
 * per batch, and never backwards, keeps that cost to one collapse per batch.
 *
 * `retireCount` is the spec's reference algorithm, written step by step; `retirementFront` is what
 * callers use: the same arithmetic evaluated at every message boundary in one pass, holding the
 * front where earlier requests put it. Property tests keep the two in agreement.
 */

import type { ImageInventory, ImageLoad, ImageRef } from "../llm/image-blocks";

/** The knobs of the policy; callers may override any of them per request. */
export interface EvictionLimits {
  /** Ceiling on image blocks per request. */
  readonly maxBlocks: number;
  /** Ceiling on image bytes per request. */
  readonly maxBytes: number;
  /** How many carriers to retire at once, so the front moves once per batch. */
  readonly batch: number;
  /** How many of the newest carriers survive block pressure that uploads alone cause. */
  readonly floor: number;
}

/** Provider ceiling on image blocks per request. */
export const MAX_IMAGE_BLOCKS = 20;
/** Provider ceiling on image bytes per request (base64 / data-URL characters). */
export const MAX_IMAGE_BYTES = 24_000_000;
/** Carriers retired per move of the front. */
export const RETIRE_BATCH = 8;
/** Newest carriers kept when retiring them could not make the request fit anyway. */
export const KEEP_FLOOR = 3;

export const DEFAULT_LIMITS: EvictionLimits = Object.freeze({
  maxBlocks: MAX_IMAGE_BLOCKS,
  maxBytes: MAX_IMAGE_BYTES,
  batch: RETIRE_BATCH,
  floor: KEEP_FLOOR,
});

/** Defaults with the caller's overrides on top (undefined fields keep the default). */
export function resolveLimits(overrides: Partial<EvictionLimits> = {}): EvictionLimits {
  return {
    maxBlocks: overrides.maxBlocks ?? DEFAULT_LIMITS.maxBlocks,
    maxBytes: overrides.maxBytes ?? DEFAULT_LIMITS.maxBytes,
    batch: overrides.batch ?? DEFAULT_LIMITS.batch,
    floor: overrides.floor ?? DEFAULT_LIMITS.floor,
  };
}

/** The outcome of the arithmetic, with the intermediate values so callers can explain it. */
export interface RetireDecision {
  /** How many of the oldest carriers to retire. */
  readonly retire: number;
  /** Whether the uploads plus the kept carriers are within both ceilings. */
  readonly fits: boolean;
  /** Why the request cannot fit; absent when it fits. */
  readonly reason?: string;
  /** The most carriers the policy may retire (step 3). */
  readonly maxRetire: number;
  /** The largest number of newest carriers that fit beside the uploads (step 4). */
  readonly window: number;
  /** Carriers retired per move of the front (step 5); 0 when nothing had to move. */
  readonly quantum: number;
}

const within = (load: ImageLoad, limits: EvictionLimits) =>
  load.blocks <= limits.maxBlocks && load.bytes <= limits.maxBytes;

/**
 * How many of the oldest tool-image carriers to retire so the request fits, by the reference
 * arithmetic of spec/eviction.md. `carriersNewestFirst` lists the tool images that may be retired
 * (newest first); `reserved` is what the user uploads weigh (counted, never retired).
 *
 * @example
 * // 21 screenshots, one block each: the front moves by a whole batch
 * retireCount(Array(21).fill({ blocks: 1, bytes: 0 }), { blocks: 0, bytes: 0 }).retire // 8
 */
export function retireCount(
  carriersNewestFirst: readonly ImageLoad[],
  reserved: ImageLoad,
  limits: EvictionLimits = DEFAULT_LIMITS,
): RetireDecision {
  const total = carriersNewestFirst.length;
  // newest[k] = reserved + the newest k carriers, so fits(k) is one comparison.
  const newest: ImageLoad[] = [reserved];
  for (const carrier of carriersNewestFirst) {
    const last = newest[newest.length - 1]!;
    newest.push({ blocks: last.blocks + carrier.blocks, bytes: last.bytes + carrier.bytes });
  }
  const fits = (kept: number) => within(newest[kept]!, limits);

  // 1. Nothing happens until the request would pass a ceiling.
  if (fits(total)) return { retire: 0, fits: true, maxRetire: total, window: total, quantum: 0 };

  // 2-3. When the uploads alone break the block ceiling, retiring the floor cannot help with
  // blocks; keep it unless bytes need it gone for the request to be sendable at all.
  const floor = Math.min(limits.floor, total);
  const uploadsBreakBlocks = reserved.blocks > limits.maxBlocks;
  const floorBytesFit = newest[floor]!.bytes <= limits.maxBytes;
  const maxRetire = uploadsBreakBlocks && floorBytesFit ? total - floor : total;

  // 4. The largest k with fits(k); fits is monotone because loads are never negative.
  let window = 0;
  while (window < total && fits(window + 1)) window += 1;

  // 5-6. Retire a batch at a time; a window close to the floor shrinks the batch so that the
  // front does not sweep away images the request could have kept.
  const quantum = Math.max(1, Math.min(limits.batch, window - floor));
  let retire = 0;
  while (retire < maxRetire && !fits(total - retire)) {
    retire = Math.min(maxRetire, retire + quantum);
  }

  const kept = total - retire;
  if (fits(kept)) return { retire, fits: true, maxRetire, window, quantum };
  return {
    retire,
    fits: false,
    reason: whyNotFitting(newest[kept]!, reserved, kept, limits),
    maxRetire,
    window,
    quantum,
  };
}

function whyNotFitting(load: ImageLoad, reserved: ImageLoad, kept: number, limits: EvictionLimits): string {
  if (reserved.blocks > limits.maxBlocks) {
    return `user uploads alone carry ${reserved.blocks} image blocks, over the ceiling of ${limits.maxBlocks}; uploads are never retired and ${kept} tool image carrier(s) kept`;
  }
  if (reserved.bytes > limits.maxBytes) {
    return `user uploads alone carry ${reserved.bytes} image bytes, over the ceiling of ${limits.maxBytes}; uploads are never retired`;
  }
  return `${load.blocks} image blocks and ${load.bytes} bytes remain, over the ceilings of ${limits.maxBlocks} blocks and ${limits.maxBytes} bytes`;
}

/**
 * The images that one message of the conversation adds: its tool-image carriers (oldest first
 * within the message) and its uploads.
 */
export interface ImageStep {
  readonly carriers: readonly ImageLoad[];
  readonly uploads: ImageLoad;
}

/**
 * The retirement front for a whole conversation: the reference `retireCount`, made sticky.
 *
 * The reference arithmetic alone can move the front backwards as a conversation grows: its
 * quantum follows the window, and a heavy new image shrinks the window (e.g. carriers of
 * [10, 1×11] blocks retire 8; adding one of 13 blocks retires 5, un-retiring three images and
 * collapsing the cached prefix twice). So the front is the furthest point the reference reached at
 * any earlier message boundary, capped by the current maximum of step 3. Every earlier request of
 * the session saw one of those prefixes, so the oldest carriers already retired stay retired.
 * When the reference arithmetic is monotone (e.g. one-block screenshots under block pressure)
 * this equals `retireCount` on the whole conversation.
 *
 * `steps` lists the messages that carry images, oldest first. It runs on every outbound request,
 * so it evaluates the reference at every boundary in one pass (linear, not quadratic): loads only
 * grow, so the oldest carrier the window can keep only moves forward, and the reference loop
 * "add a quantum until the rest fits" ends at the first multiple of the quantum past it. The
 * tests hold it equal to `retireCount` at every boundary.
 *
 * `fronts`, when given, receives the front after each boundary (what a request ending there
 * retires): the `cost` strategy prices its moves against this rival's.
 *
 * @example
 * const steps = [{ carriers: [{ blocks: 1, bytes: 1000 }], uploads: { blocks: 0, bytes: 0 } }];
 * retirementFront(steps).retire // 0: one screenshot is far below both ceilings
 */
export function retirementFront(
  steps: readonly ImageStep[],
  limits: EvictionLimits = DEFAULT_LIMITS,
  fronts?: number[],
): RetireDecision {
  // oldest[i] = the i oldest carriers together; the newest k of n weigh oldest[n] - oldest[n - k].
  const oldestBlocks = [0];
  const oldestBytes = [0];
  let reservedBlocks = 0;
  let reservedBytes = 0;
  let keepFrom = 0; // the oldest carrier the window can keep
  let furthest = 0;
  let last: Omit<RetireDecision, "retire" | "fits" | "reason"> = { maxRetire: 0, window: 0, quantum: 0 };

  for (const step of steps) {
    for (const carrier of step.carriers) {
      oldestBlocks.push(oldestBlocks[oldestBlocks.length - 1]! + carrier.blocks);
      oldestBytes.push(oldestBytes[oldestBytes.length - 1]! + carrier.bytes);
    }
    reservedBlocks += step.uploads.blocks;
    reservedBytes += step.uploads.bytes;
    const total = oldestBlocks.length - 1;
    const blocksRoom = limits.maxBlocks - reservedBlocks - oldestBlocks[total]!;
    const bytesRoom = limits.maxBytes - reservedBytes - oldestBytes[total]!;
    // Keeping carriers from `keepFrom` on fits once what lies before it covers the excess.
    while (keepFrom < total && (oldestBlocks[keepFrom]! < -blocksRoom || oldestBytes[keepFrom]! < -bytesRoom)) {
      keepFrom += 1;
    }
    const reservedFits = reservedBlocks <= limits.maxBlocks && reservedBytes <= limits.maxBytes;
    if (keepFrom === 0 && reservedFits && blocksRoom >= 0 && bytesRoom >= 0) {
      last = { maxRetire: total, window: total, quantum: 0 };
      fronts?.push(furthest);
      continue;
    }
    const window = reservedFits ? total - keepFrom : 0;
    const floor = Math.min(limits.floor, total);
    const uploadsBreakBlocks = reservedBlocks > limits.maxBlocks;
    const floorBytesFit = reservedBytes + oldestBytes[total]! - oldestBytes[total - floor]! <= limits.maxBytes;
    const maxRetire = uploadsBreakBlocks && floorBytesFit ? total - floor : total;
    const quantum = Math.max(1, Math.min(limits.batch, window - floor));
    const needed = reservedFits ? keepFrom : Number.POSITIVE_INFINITY;
    furthest = Math.max(furthest, Math.min(maxRetire, Math.ceil(needed / quantum) * quantum));
    last = { maxRetire, window, quantum };
    fronts?.push(Math.min(furthest, maxRetire));
  }

  const total = oldestBlocks.length - 1;
  const retire = Math.min(furthest, last.maxRetire);
  const reserved: ImageLoad = { blocks: reservedBlocks, bytes: reservedBytes };
  const kept: ImageLoad = {
    blocks: reservedBlocks + oldestBlocks[total]! - oldestBlocks[retire]!,
    bytes: reservedBytes + oldestBytes[total]! - oldestBytes[retire]!,
  };
  if (within(kept, limits)) return { retire, fits: true, ...last };
  return { retire, fits: false, reason: whyNotFitting(kept, reserved, total - retire, limits), ...last };
}

/** Blocks and bytes of some image references. */
export function loadOf(images: readonly ImageRef[]): ImageLoad {
  let bytes = 0;
  for (const image of images) bytes += image.bytes;
  return { blocks: images.length, bytes };
}

/**
 * The inventory as the policy's per-message steps (oldest message first), so the front can be
 * held where earlier requests of the same conversation put it.
 */
export function imageSteps(inventory: ImageInventory): ImageStep[] {
  const byMessage = new Map<number, { carriers: ImageLoad[]; uploads: ImageRef[] }>();
  const stepOf = (message: number) => {
    let step = byMessage.get(message);
    if (!step) byMessage.set(message, (step = { carriers: [], uploads: [] }));
    return step;
  };
  for (const carrier of inventory.carriers) stepOf(carrier.message).carriers.push(carrier);
  for (const upload of inventory.uploads) stepOf(upload.message).uploads.push(upload);
  return [...byMessage.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, step]) => ({ carriers: step.carriers, uploads: loadOf(step.uploads) }));
}
