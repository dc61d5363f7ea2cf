/** Invariants of the eviction policy over random conversations in both formats (fast-check). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ANTHROPIC_MESSAGES } from "../../shared/llm/anthropic.messages";
import type { EvictRequest } from "../../shared/eviction/evict.schema";
import { evictContext } from "../../shared/eviction/evict.service";
import type { ImageInventory, ImageLoad } from "../../shared/llm/image-blocks";
import { OPENAI_CHAT } from "../../shared/llm/openai.chat";
import { loadOf, retireCount, retirementFront, type ImageStep } from "../../shared/eviction/policy";
import { conversation, deepFreeze, FORMATS, type Turn } from "./eviction.fixtures";

const adapterOf = { anthropic: ANTHROPIC_MESSAGES, openai: OPENAI_CHAT };

// Small sizes and small ceilings, so random sessions hit both ceilings and the floor often.
const imageBytes = fc.oneof(fc.constant(0), fc.integer({ min: 30, max: 600 }));
const turn: fc.Arbitrary<Turn> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(imageBytes, { minLength: 1, maxLength: 3 }).map((images): Turn => ({ kind: "tool", images })),
  },
  {
    weight: 1,
    arbitrary: fc.array(imageBytes, { minLength: 1, maxLength: 3 }).map((images): Turn => ({ kind: "upload", images })),
  },
  { weight: 2, arbitrary: fc.constant<Turn>({ kind: "text" }) },
);
const turns = fc.array(turn, { maxLength: 40 });
// Growth with uneven carriers (one tool result with many images, big and small screenshots) is
// where a window-dependent quantum could move the front backwards.
const unevenTool = fc
  .array(fc.integer({ min: 30, max: 2_000 }), { minLength: 1, maxLength: 14 })
  .map((images): Turn => ({ kind: "tool", images }));
const unevenTurns = fc.array(fc.oneof({ weight: 4, arbitrary: turn }, { weight: 1, arbitrary: unevenTool }), {
  maxLength: 40,
});
const limits = fc.record({
  max_blocks: fc.integer({ min: 1, max: 20 }),
  max_bytes: fc.integer({ min: 100, max: 8_000 }),
  batch: fc.integer({ min: 1, max: 8 }),
  floor: fc.integer({ min: 0, max: 4 }),
});
type Limits = Required<NonNullable<EvictRequest["limits"]>>;

const sum = (loads: readonly ImageLoad[]): ImageLoad =>
  loads.reduce((a, b) => ({ blocks: a.blocks + b.blocks, bytes: a.bytes + b.bytes }), { blocks: 0, bytes: 0 });
const within = (load: ImageLoad, l: Limits) => load.blocks <= l.max_blocks && load.bytes <= l.max_bytes;
const everything = (inv: ImageInventory) => sum([...inv.carriers, loadOf(inv.uploads)]);
/** Where every retired image sat: stable positions, since a longer conversation only appends. */
const retiredKeys = (out: ReturnType<typeof evictContext>) =>
  new Set(out.evicted.map((e) => `${e.message}/${e.block}/${e.part ?? "-"}`));

describe.each(FORMATS)("%s: properties", (format) => {
  const adapter = adapterOf[format];

  it("fits whenever the uploads alone fit, and the outbound copy really is within the ceilings", () => {
    fc.assert(
      fc.property(turns, limits, (script, l) => {
        const messages = conversation(format, script);
        const out = evictContext({ format, messages, limits: l });
        const reserved = loadOf(adapter.inventory(messages).uploads);
        const after = everything(adapter.inventory(out.messages));
        if (within(reserved, l)) expect(out.stats.fits).toBe(true);
        expect(within(after, l)).toBe(out.stats.fits);
        expect(after.blocks).toBe(out.stats.image_blocks_after);
        expect(after.bytes).toBe(out.stats.bytes_after);
      }),
    );
  });

  it("never rewrites an upload or any message without a retired tool image, nor the input", () => {
    fc.assert(
      fc.property(turns, limits, (script, l) => {
        const messages = deepFreeze(conversation(format, script));
        const snapshot = JSON.stringify(messages);
        const out = evictContext({ format, messages, limits: l });
        expect(JSON.stringify(messages)).toBe(snapshot);
        expect(out.messages).toHaveLength(messages.length);
        const touched = new Set(out.evicted.map((e) => e.message));
        for (const upload of adapter.inventory(messages).uploads) expect(touched.has(upload.message)).toBe(false);
        messages.forEach((message, i) => {
          if (!touched.has(i)) expect(out.messages[i]).toBe(message);
        });
        expect(loadOf(adapter.inventory(out.messages).uploads)).toEqual(loadOf(adapter.inventory(messages).uploads));
      }),
    );
  });

  it("retires the oldest carriers: exactly the first `retired` of the conversation", () => {
    fc.assert(
      fc.property(turns, limits, (script, l) => {
        const messages = conversation(format, script);
        const out = evictContext({ format, messages, limits: l });
        const oldest = adapter.inventory(messages).carriers.slice(0, out.retired);
        expect(out.evicted).toEqual(oldest.flatMap((c) => c.images));
      }),
    );
  });

  it("only grows the retired set as the conversation grows (while uploads alone stay under the block ceiling)", () => {
    fc.assert(
      fc.property(unevenTurns, limits, (script, l) => {
        fc.pre(loadOf(adapter.inventory(conversation(format, script)).uploads).blocks <= l.max_blocks);
        // Replay the session request by request: every request is the previous one plus a turn.
        let earlier = evictContext({ format, messages: [], limits: l });
        for (let cut = 1; cut <= script.length; cut++) {
          const later = evictContext({ format, messages: conversation(format, script.slice(0, cut)), limits: l });
          expect(later.retired).toBeGreaterThanOrEqual(earlier.retired);
          const laterKeys = retiredKeys(later);
          for (const key of retiredKeys(earlier)) expect(laterKeys.has(key)).toBe(true);
          earlier = later;
        }
      }),
      { numRuns: 300 },
    );
  });

  it("keeps the floor under block pressure from uploads when the bytes allow it", () => {
    fc.assert(
      fc.property(turns, limits, (script, l) => {
        const messages = conversation(format, script);
        const { carriers, uploads } = adapter.inventory(messages);
        const reserved = loadOf(uploads);
        const floor = Math.min(l.floor, carriers.length);
        const newestFloor = sum(carriers.slice(carriers.length - floor));
        fc.pre(reserved.blocks > l.max_blocks && reserved.bytes + newestFloor.bytes <= l.max_bytes);
        const out = evictContext({ format, messages, limits: l });
        expect(out.retired).toBeLessThanOrEqual(carriers.length - floor);
        expect(out.stats.fits).toBe(false);
      }),
    );
  });

  it("is deterministic: the same conversation gives the same bytes", () => {
    fc.assert(
      fc.property(turns, limits, (script, l) => {
        const a = evictContext({ format, messages: conversation(format, script), limits: l });
        const b = evictContext({ format, messages: conversation(format, script), limits: l });
        expect(JSON.stringify(a)).toBe(JSON.stringify(b));
      }),
      { numRuns: 50 },
    );
  });
});

describe("retireCount: properties of the bare arithmetic", () => {
  const load = fc.record({ blocks: fc.integer({ min: 1, max: 6 }), bytes: fc.integer({ min: 0, max: 500 }) });
  const reservedLoad = fc.record({
    blocks: fc.integer({ min: 0, max: 25 }),
    bytes: fc.integer({ min: 0, max: 3_000 }),
  });
  const policyLimits = fc.record({
    maxBlocks: fc.integer({ min: 1, max: 20 }),
    maxBytes: fc.integer({ min: 100, max: 5_000 }),
    batch: fc.integer({ min: 1, max: 8 }),
    floor: fc.integer({ min: 0, max: 4 }),
  });

  it("moves in whole quanta up to its maximum, and fits whenever the uploads alone fit", () => {
    fc.assert(
      fc.property(fc.array(load, { maxLength: 40 }), reservedLoad, policyLimits, (newestFirst, reserved, l) => {
        const decision = retireCount(newestFirst, reserved, l);
        expect(decision.retire).toBeLessThanOrEqual(decision.maxRetire);
        if (decision.retire > 0 && decision.retire < decision.maxRetire) {
          expect(decision.retire % decision.quantum).toBe(0);
        }
        const kept = sum([reserved, ...newestFirst.slice(0, newestFirst.length - decision.retire)]);
        const fitsNow = kept.blocks <= l.maxBlocks && kept.bytes <= l.maxBytes;
        expect(decision.fits).toBe(fitsNow);
        if (reserved.blocks <= l.maxBlocks && reserved.bytes <= l.maxBytes) expect(decision.fits).toBe(true);
        // The smallest whole number of quanta: one quantum fewer would not have fitted.
        if (decision.fits && decision.retire > 0) {
          const fewer = Math.max(
            0,
            Math.ceil(decision.retire / decision.quantum) * decision.quantum - decision.quantum,
          );
          const keptWithFewer = sum([reserved, ...newestFirst.slice(0, newestFirst.length - fewer)]);
          expect(keptWithFewer.blocks <= l.maxBlocks && keptWithFewer.bytes <= l.maxBytes).toBe(false);
        }
      }),
    );
  });

  it("is what retirementFront computes in one pass, for a conversation in one message", () => {
    fc.assert(
      fc.property(fc.array(load, { maxLength: 40 }), reservedLoad, policyLimits, (newestFirst, reserved, l) => {
        const oneMessage: ImageStep[] = [{ carriers: [...newestFirst].reverse(), uploads: reserved }];
        expect(retirementFront(oneMessage, l)).toEqual(retireCount(newestFirst, reserved, l));
      }),
      { numRuns: 500 },
    );
  });

  it("is held at its furthest point over every message boundary by retirementFront, which reports the front at each", () => {
    const step = fc.record({
      carriers: fc.array(load, { maxLength: 3 }),
      uploads: fc.oneof(
        { weight: 4, arbitrary: fc.constant({ blocks: 0, bytes: 0 }) },
        {
          weight: 1,
          arbitrary: fc.record({ blocks: fc.integer({ min: 0, max: 4 }), bytes: fc.integer({ min: 0, max: 500 }) }),
        },
      ),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), policyLimits, (steps, l) => {
        // The quadratic definition: the reference at every boundary, the furthest one, capped.
        let furthest = 0;
        let reference = retireCount([], { blocks: 0, bytes: 0 }, l);
        for (let i = 1; i <= steps.length; i++) {
          const prefix = steps.slice(0, i);
          const newestFirst = prefix.flatMap((s) => s.carriers).reverse();
          reference = retireCount(newestFirst, sum(prefix.map((s) => s.uploads)), l);
          furthest = Math.max(furthest, reference.retire);
        }
        const fronts: number[] = [];
        const front = retirementFront(steps, l, fronts);
        // `fronts` is the front after every boundary: what the conversation up to there retires.
        expect(fronts).toEqual(steps.map((_, i) => retirementFront(steps.slice(0, i + 1), l).retire));
        expect(front.retire).toBe(Math.min(furthest, reference.maxRetire));
        expect(front.maxRetire).toBe(reference.maxRetire);
        expect(front.window).toBe(reference.window);
        expect(front.retire).toBeGreaterThanOrEqual(reference.retire);
        if (reference.fits) expect(front.fits).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
