/**
 * The evict use case: classify a conversation's images with its format adapter, ask the policy how
 * far the retirement front stands, and return the outbound copy with the api.md counts. Pure and
 * synchronous, so the route, the MCP tool and the replay share it and it can run on every outbound
 * request.
 */
import { anthropicAdapter } from "./anthropic";
import type { EvictedImage, EvictRequest, EvictResponse } from "./evict.schema";
import { imageSteps, loadOf, type EvictionAdapter } from "./inventory";
import { openaiAdapter } from "./openai";
import { resolveLimits, retirementFront } from "./policy";

const adapters: Record<EvictRequest["format"], EvictionAdapter> = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
};

/**
 * Retire the oldest tool images of a conversation in batches, only once it would pass a ceiling.
 * Never throws for a conversation that cannot fit: `stats.fits` is false and `stats.reason` says
 * why. The input is never modified; untouched messages are shared with the output.
 *
 * `evicted[]` has one entry per retired image block: `message` is the index in `messages`;
 * `block` is the index in that message's `content` array (the tool_result block for Anthropic,
 * the image part itself for OpenAI); `part` (Anthropic only) is the image's index inside the
 * tool_result's own `content` array. Each such position now holds the retired-image text block.
 * `retired` counts carriers (tool results), the policy's unit; `stats.retired_blocks` counts blocks.
 *
 * @example
 * const out = evictContext({ format: "anthropic", messages });
 * if (!out.stats.fits) console.warn(out.stats.reason);
 * send(out.messages);
 */
export function evictContext(request: EvictRequest): EvictResponse {
  const adapter = adapters[request.format];
  const limits = resolveLimits({
    maxBlocks: request.limits?.max_blocks,
    maxBytes: request.limits?.max_bytes,
    batch: request.limits?.batch,
    floor: request.limits?.floor,
  });
  const { carriers, uploads } = adapter.inventory(request.messages);
  const decision = retirementFront(imageSteps({ carriers, uploads }), limits);

  const retired = carriers.slice(0, decision.retire); // carriers are oldest first
  const messages = decision.retire === 0 ? request.messages.slice() : adapter.retire(request.messages, retired);

  const evicted: EvictedImage[] = [];
  for (const carrier of retired) {
    for (const image of carrier.images) {
      evicted.push(
        image.part === undefined
          ? { message: image.message, block: image.block, bytes: image.bytes }
          : { message: image.message, block: image.block, part: image.part, bytes: image.bytes },
      );
    }
  }

  const reserved = loadOf(uploads);
  const tool = { blocks: 0, bytes: 0 };
  for (const carrier of carriers) {
    tool.blocks += carrier.blocks;
    tool.bytes += carrier.bytes;
  }
  const gone = loadOf(evicted);
  return {
    success: true,
    messages,
    retired: decision.retire,
    evicted,
    stats: {
      image_blocks_before: tool.blocks + reserved.blocks,
      image_blocks_after: tool.blocks + reserved.blocks - gone.blocks,
      bytes_before: tool.bytes + reserved.bytes,
      bytes_after: tool.bytes + reserved.bytes - gone.bytes,
      reserved_blocks: reserved.blocks,
      reserved_bytes: reserved.bytes,
      carriers_before: carriers.length,
      retired_blocks: gone.blocks,
      fits: decision.fits,
      ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      limits: { max_blocks: limits.maxBlocks, max_bytes: limits.maxBytes, batch: limits.batch, floor: limits.floor },
    },
  };
}
