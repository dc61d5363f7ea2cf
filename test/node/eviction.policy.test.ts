/** The retire-count arithmetic of spec/eviction.md, on plain block and byte counts. */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  resolveLimits,
  retireCount,
  retirementFront,
  type ImageStep,
} from "../../shared/eviction/policy";
import type { ImageLoad } from "../../shared/llm/image-blocks";

const none: ImageLoad = { blocks: 0, bytes: 0 };
const shots = (n: number, bytes = 0): ImageLoad[] => Array.from({ length: n }, () => ({ blocks: 1, bytes }));
const carriers = (blocks: number[]): ImageLoad[] => blocks.map((b) => ({ blocks: b, bytes: 0 }));
/** One message per carrier, no uploads: how a screenshot session grows. */
const oneStepEach = (loads: ImageLoad[]): ImageStep[] => loads.map((load) => ({ carriers: [load], uploads: none }));

describe("constants", () => {
  it("are the spec's ceilings, batch and floor", () => {
    expect(DEFAULT_LIMITS).toEqual({ maxBlocks: 20, maxBytes: 24_000_000, batch: 8, floor: 3 });
  });

  it("take per-request overrides field by field", () => {
    expect(resolveLimits({ maxBlocks: 100, floor: undefined })).toEqual({
      maxBlocks: 100,
      maxBytes: 24_000_000,
      batch: 8,
      floor: 3,
    });
  });
});

describe("retireCount: the expected counts of eviction.md", () => {
  const cases: Array<[string, ImageLoad[], ImageLoad, number, boolean]> = [
    ["20 screenshots", shots(20), none, 0, true],
    ["21 screenshots", shots(21), none, 8, true],
    ["28 screenshots", shots(28), none, 8, true],
    ["29 screenshots", shots(29), none, 16, true],
    ["one carrier with 25 blocks", carriers([25]), none, 1, true],
    ["carriers [10,10,10,10]", carriers([10, 10, 10, 10]), none, 2, true],
    ["5 carriers with 21 uploads", shots(5), { blocks: 21, bytes: 0 }, 2, false],
    ["carriers [1,1] with 25 uploads", shots(2), { blocks: 25, bytes: 0 }, 0, false],
    ["13 carriers of 2 MB", shots(13, 2_000_000), none, 8, true],
    ["no carriers", [], none, 0, true],
  ];
  it.each(cases)("%s", (_name, newestFirst, reserved, retire, fits) => {
    const decision = retireCount(newestFirst, reserved);
    expect(decision.retire).toBe(retire);
    expect(decision.fits).toBe(fits);
    if (fits) expect(decision.reason).toBeUndefined();
    else expect(decision.reason).toMatch(/uploads alone carry \d+ image blocks/);
  });

  it("explains its steps: window, quantum and maximum", () => {
    expect(retireCount(shots(21), none)).toEqual({ retire: 8, fits: true, maxRetire: 21, window: 20, quantum: 8 });
    expect(retireCount(carriers([10, 10, 10, 10]), none)).toMatchObject({ window: 2, quantum: 1, maxRetire: 4 });
    expect(retireCount(shots(5), { blocks: 21, bytes: 0 })).toMatchObject({ window: 0, maxRetire: 2 });
  });

  it("lets byte pressure take the floor when uploads break the block ceiling", () => {
    // Uploads break blocks, and the 3 newest carriers cannot fit the bytes either: all may go.
    const decision = retireCount(shots(4, 10_000_000), { blocks: 21, bytes: 0 });
    expect(decision.maxRetire).toBe(4);
    expect(decision.retire).toBe(4);
    expect(decision.fits).toBe(false);
  });

  it("retires everything when uploads alone exceed the byte ceiling, and says so", () => {
    const decision = retireCount(shots(3, 1_000), { blocks: 1, bytes: 25_000_000 });
    expect(decision.retire).toBe(3);
    expect(decision.reason).toMatch(/uploads alone carry 25000000 image bytes/);
  });

  it("counts a request exactly at both ceilings as fitting", () => {
    expect(retireCount(shots(12, 2_000_000), none).retire).toBe(0);
    expect(retireCount(shots(12, 2_000_000), { blocks: 8, bytes: 0 }).retire).toBe(0);
    expect(retireCount(shots(12, 2_000_000), { blocks: 8, bytes: 1 }).retire).toBe(8);
  });

  it("honours overridden limits", () => {
    const limits = resolveLimits({ maxBlocks: 5, batch: 2, floor: 1 });
    expect(retireCount(shots(6), none, limits).retire).toBe(2);
    expect(retireCount(shots(8), none, limits).retire).toBe(4);
  });
});

describe("retirementFront", () => {
  it("moves exactly 3 times while a session grows from 4 to 43 screenshots, once per batch", () => {
    const moves: number[] = [];
    let previous = retirementFront(oneStepEach(shots(4))).retire;
    for (let n = 5; n <= 43; n++) {
      const retire = retirementFront(oneStepEach(shots(n))).retire;
      if (retire !== previous) moves.push(n);
      expect(retire).toBeGreaterThanOrEqual(previous);
      previous = retire;
    }
    expect(moves).toEqual([21, 29, 37]);
    expect(previous).toBe(24);
  });

  it("holds the front where an earlier request put it, where the bare arithmetic would move it back", () => {
    // Oldest first: one carrier of 10 blocks, then 11 single screenshots: 21 blocks, retire 8.
    const before = [{ blocks: 10, bytes: 0 }, ...shots(11)];
    // Then a tool result with 13 screenshots shrinks the window to 8 and the quantum to 5.
    const after = [...before, { blocks: 13, bytes: 0 }];
    expect(retireCount([...before].reverse(), none).retire).toBe(8);
    expect(retireCount([...after].reverse(), none).retire).toBe(5); // would un-retire 3 images

    const held = retirementFront(oneStepEach(after));
    expect(held.retire).toBe(8);
    expect(held.fits).toBe(true);
  });

  it("equals the reference arithmetic when the whole conversation is one message", () => {
    const steps: ImageStep[] = [{ carriers: shots(29), uploads: { blocks: 0, bytes: 0 } }];
    expect(retirementFront(steps).retire).toBe(16);
  });

  it("counts uploads from every message as reserved", () => {
    const steps: ImageStep[] = [
      { carriers: [], uploads: { blocks: 10, bytes: 0 } },
      ...oneStepEach(shots(5)),
      { carriers: [], uploads: { blocks: 11, bytes: 0 } },
    ];
    const decision = retirementFront(steps);
    expect(decision.retire).toBe(2); // 5 carriers, 21 uploads: only down to the floor
    expect(decision.fits).toBe(false);
  });
});
