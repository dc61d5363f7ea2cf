/**
 * Anthropic Messages adapter: tool images are `image` blocks inside the `content` array of a
 * `tool_result` block, one carrier per tool_result; every other top-level `image` block is a user
 * upload. The spec walks messages newest first and sibling tool_results newest first too; the
 * inventory lists carriers in the reverse (chronological) order, which is the same ordering.
 * Knows nothing of ceilings or batches: that is policy.ts.
 */
import { asRecord, RETIRED_IMAGE_TEXT, type Carrier, type EvictionAdapter, type ImageInventory, type ImageRef } from "./inventory";

/** Base64 characters of an Anthropic image block; URL and file sources travel as references (0). */
function imageBytes(block: Record<string, unknown>): number {
  const source = asRecord(block.source);
  if (source?.type === "base64" && typeof source.data === "string") return source.data.length;
  return 0;
}

const isImage = (block: Record<string, unknown> | null) => block?.type === "image";

function inventory(messages: readonly unknown[]): ImageInventory {
  const carriers: Carrier[] = [];
  const uploads: ImageRef[] = [];
  messages.forEach((raw, message) => {
    const content = asRecord(raw)?.content;
    if (!Array.isArray(content)) return;
    content.forEach((rawBlock, block) => {
      const entry = asRecord(rawBlock);
      if (entry && isImage(entry)) {
        uploads.push({ message, block, bytes: imageBytes(entry) });
        return;
      }
      if (entry?.type !== "tool_result" || !Array.isArray(entry.content)) return;
      const images: ImageRef[] = [];
      entry.content.forEach((rawPart, part) => {
        const nested = asRecord(rawPart);
        if (nested && isImage(nested)) images.push({ message, block, part, bytes: imageBytes(nested) });
      });
      if (images.length === 0) return;
      let bytes = 0;
      for (const image of images) bytes += image.bytes;
      carriers.push({ message, block, images, blocks: images.length, bytes });
    });
  });
  return { carriers, uploads };
}

function retire(messages: readonly unknown[], retired: readonly Carrier[]): unknown[] {
  const outbound = messages.slice();
  // Group by message so each touched message is copied once, whatever it carries.
  const byMessage = new Map<number, Carrier[]>();
  for (const carrier of retired) {
    const list = byMessage.get(carrier.message) ?? [];
    list.push(carrier);
    byMessage.set(carrier.message, list);
  }
  for (const [index, carriers] of byMessage) {
    const message = asRecord(messages[index])!;
    const content = (message.content as unknown[]).slice();
    for (const carrier of carriers) {
      const toolResult = asRecord(content[carrier.block])!;
      const parts = (toolResult.content as unknown[]).slice();
      for (const image of carrier.images) parts[image.part!] = { type: "text", text: RETIRED_IMAGE_TEXT };
      content[carrier.block] = { ...toolResult, content: parts };
    }
    outbound[index] = { ...message, content };
  }
  return outbound;
}

/** The Anthropic Messages format adapter. */
export const anthropicAdapter: EvictionAdapter = { format: "anthropic", inventory, retire };
