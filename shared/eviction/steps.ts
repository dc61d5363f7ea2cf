/**
 * The one builder of the cost model's steps: a conversation (messages, in either format, plus what
 * precedes them: system prompt and tools) becomes one `CostStep` per message with its tool-image
 * carriers, their estimated tokens and where they start. The route, the provider proxy and the
 * replay all call it, so "the replay measures what the route does" holds by construction.
 */
import { CHARS_PER_TOKEN, imageSize, imageTokens, textTokens } from "../llm/estimate";
import type { CostCarrier, CostStep } from "./cost";
import type { WireFormat } from "../llm/format";
import type { ImageInventory, ImageRef } from "../llm/image-blocks";

/** A conversation's cost steps, and what the ceilings need to know of its images. */
export interface ConversationSteps {
  readonly steps: CostStep[];
  /** The longest edge (px) of any of its images; Infinity when one cannot be read (assume the worst). */
  readonly maxEdge: number;
  /** Prompt tokens before the first message (system prompt and tools). */
  readonly prefixTokens: number;
}

const NO_CARRIERS: CostCarrier[] = [];
const NO_UPLOADS = Object.freeze({ blocks: 0, bytes: 0 });

/**
 * One step per message, oldest first: its carriers (estimated tokens, and the prompt tokens before
 * the message: where a rewrite starts when the front stands there), its uploads, the prompt tokens
 * to its end, and the requests answered so far (assistant messages). `prefixTokens` is what the
 * request sends before the messages (system prompt, tools).
 *
 * `tokensPerImage`, when given (a model's cost learned from its bills: ./image-cost.ts), weighs
 * every image instead of the pixel estimate.
 *
 * @example
 * const { steps } = conversationSteps(ANTHROPIC_MESSAGES, messages, ANTHROPIC_MESSAGES.inventory(messages), textTokens(system));
 * costFront(steps, settings);
 */
export function conversationSteps(
  adapter: WireFormat,
  messages: readonly unknown[],
  { carriers, uploads }: ImageInventory,
  prefixTokens = 0,
  tokensPerImage?: number,
): ConversationSteps {
  let maxEdge = 0;
  const weigh = (image: ImageRef) => {
    const data = adapter.imageData(messages, image);
    const size = data === null ? null : imageSize(data);
    maxEdge = size ? Math.max(maxEdge, size.width, size.height) : Number.POSITIVE_INFINITY;
    return tokensPerImage ?? imageTokens(size);
  };
  const uploadsByMessage = new Map<number, { blocks: number; bytes: number; tokens: number }>();
  for (const upload of uploads) {
    const load = uploadsByMessage.get(upload.message) ?? { blocks: 0, bytes: 0, tokens: 0 };
    uploadsByMessage.set(upload.message, {
      blocks: load.blocks + 1,
      bytes: load.bytes + upload.bytes,
      tokens: load.tokens + weigh(upload),
    });
  }

  const steps: CostStep[] = [];
  let tokens = prefixTokens;
  let turns = 0;
  let next = 0; // carriers are oldest first: the next one not yet placed in a step
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as { role?: unknown } | null;
    if (message?.role === "assistant") turns += 1;
    const start = tokens;
    let stepCarriers = NO_CARRIERS;
    let textCarried = 0; // a text tool result's tokens, weighed as its carrier's, not again with the message's text
    while (next < carriers.length && carriers[next]!.message === index) {
      if (stepCarriers === NO_CARRIERS) stepCarriers = [];
      const carrier = carriers[next]!;
      let carrierTokens = 0;
      for (const image of carrier.images) carrierTokens += weigh(image);
      if (carrier.textChars !== undefined) {
        carrierTokens += Math.ceil(carrier.textChars / CHARS_PER_TOKEN);
        textCarried += Math.ceil(carrier.textChars / CHARS_PER_TOKEN);
      }
      stepCarriers.push({ blocks: carrier.blocks, bytes: carrier.bytes, tokens: carrierTokens, start });
      tokens += carrierTokens;
      next += 1;
    }
    tokens += Math.max(0, textTokens(message) - textCarried);
    const uploaded = uploadsByMessage.get(index);
    tokens += uploaded?.tokens ?? 0;
    steps.push({ carriers: stepCarriers, uploads: uploaded ?? NO_UPLOADS, end: tokens, turns: Math.max(1, turns) });
  }
  return { steps, maxEdge, prefixTokens };
}
