/**
 * Text tool results as retirable carriers (docs/eviction.md, "Old tool results"): the candidates,
 * their place among the image carriers (one front over images and text, so one decision per
 * request), and which of them a front retires. Where they sit in a body is the wire formats'
 * (`WireFormat.toolResults`, shared/llm/tool-result-blocks.ts).
 */
import type { Carrier, ImageInventory } from "../llm/image-blocks";
import type { TextToolResult } from "../llm/tool-result-blocks";

/** Tool results kept whole whatever they weigh: the newest ones, which the model is working from. */
export const KEEP_NEWEST_TOOL_RESULTS = 3;

/** The tool results the strategy may retire: those over `minChars` (`proxy.tool_result_min_chars`). */
export function toolResultCandidates(results: readonly TextToolResult[], minChars: number): TextToolResult[] {
  return results.filter((result) => result.chars > minChars);
}

const order = (a: { message: number; block: number }, b: { message: number; block: number }) =>
  a.message - b.message || a.block - b.block;

/**
 * The inventory with the candidate tool results as carriers of no image (`textChars` set), in
 * conversation order among the image carriers: one front over images and text, so one decision
 * per request. A new tool result always lands after every older carrier, so the front keeps its
 * meaning as the conversation grows.
 */
export function withToolResultCarriers(
  inventory: ImageInventory,
  candidates: readonly TextToolResult[],
): ImageInventory {
  if (candidates.length === 0) return inventory;
  const text: Carrier[] = candidates.map((result) => ({
    message: result.message,
    block: result.block,
    images: [],
    blocks: 0,
    bytes: 0,
    textChars: result.chars,
  }));
  return { carriers: [...inventory.carriers, ...text].sort(order), uploads: inventory.uploads };
}

/**
 * The tool results among the first `front` carriers, less any among the newest
 * `KEEP_NEWEST_TOOL_RESULTS` carriers (a ceiling may push the front past the floor for images;
 * the newest tool results are never retired for it).
 */
export function retiredToolResults(
  carriers: readonly Carrier[],
  front: number,
  candidates: readonly TextToolResult[],
): TextToolResult[] {
  const byPlace = new Map(candidates.map((result) => [`${result.message}/${result.block}`, result]));
  const upTo = Math.min(front, carriers.length - KEEP_NEWEST_TOOL_RESULTS);
  const retired: TextToolResult[] = [];
  for (const carrier of carriers.slice(0, Math.max(0, upTo))) {
    if (carrier.textChars === undefined) continue;
    const result = byPlace.get(`${carrier.message}/${carrier.block}`);
    if (result) retired.push(result);
  }
  return retired;
}
