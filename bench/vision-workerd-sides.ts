/**
 * A fit's workerd CPU in this checkout beside another's: bench/vision-before-after.ts in its
 * workerd-only mode (VISION_SIDES=workerd), the other checkout from WORKERD_SIDES_BEFORE (or
 * BEFORE; without either, this checkout alone), the session's screenshot the 16th. Every option of
 * that tool applies (ROUNDS, VISION_SIDES_HALF=1 for the decode and resample half alone).
 * Run: WORKERD_SIDES_BEFORE=/work/main npx tsx bench/vision-workerd-sides.ts [name-substring...]
 */
process.env.VISION_SIDES = "workerd";
process.env.VISION_SIDES_SESSION_SEED ??= "16";
if (process.env.WORKERD_SIDES_BEFORE) process.env.BEFORE = process.env.WORKERD_SIDES_BEFORE;
await import("./vision-before-after");

export {};
