/**
 * Anthropic Messages adapter: tool images are `image` blocks inside the `content` array of a
 * `tool_result` block, one carrier per tool_result; every other top-level `image` block is a user
 * upload. The spec walks messages newest first and sibling tool_results newest first too; the
 * inventory lists carriers in the reverse (chronological) order, which is the same ordering.
 * Knows nothing of ceilings or batches: that is policy.ts.
 */
import { ANTHROPIC_BREAKPOINTS } from "../eviction/cost";
import {
  asRecord,
  fixedRetiredText,
  type Carrier,
  type EvictionAdapter,
  type ImageInventory,
  type ImageRef,
  type RetiredText,
  retiredPart,
} from "./image-blocks";

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

function retire(
  messages: readonly unknown[],
  retired: readonly Carrier[],
  textOf: RetiredText = fixedRetiredText,
): unknown[] {
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
      for (const image of carrier.images) parts[image.part!] = retiredPart(parts[image.part!], "text", textOf(image));
      content[carrier.block] = { ...toolResult, content: parts };
    }
    outbound[index] = { ...message, content };
  }
  return outbound;
}

function imageData(messages: readonly unknown[], image: ImageRef): string | null {
  const content = asRecord(messages[image.message])?.content;
  if (!Array.isArray(content)) return null;
  let block = asRecord(content[image.block]);
  if (image.part !== undefined) {
    const parts = block?.content;
    block = Array.isArray(parts) ? asRecord(parts[image.part]) : null;
  }
  const source = asRecord(block?.source);
  return source?.type === "base64" && typeof source.data === "string" ? source.data : null;
}

/** The Anthropic Messages format adapter. */
export const anthropicAdapter: EvictionAdapter = { format: "anthropic", inventory, retire, imageData };

/**
 * Blocks that cannot carry `cache_control` (thinking, and the beta `fallback` and
 * `mcp_tool_listing`, whose params have no such field), and user uploads, which the service never
 * touches. An empty text block cannot be marked either (`markable`).
 */
const UNMARKABLE = new Set(["thinking", "redacted_thinking", "image", "fallback", "mcp_tool_listing"]);

const markable = (entry: Record<string, unknown> | null): boolean =>
  !!entry &&
  typeof entry.type === "string" &&
  !UNMARKABLE.has(entry.type) &&
  !(entry.type === "text" && entry.text === "");

/** Where a breakpoint can stand: a block of a message whose content is an array. */
export interface BlockPosition {
  readonly message: number;
  readonly block: number;
}

/**
 * The last block before `position` that can carry a `cache_control` breakpoint (at most 20 blocks
 * back, never inside a plain-string message, whose bytes would change), or null.
 */
export function blockBefore(messages: readonly unknown[], position: BlockPosition): BlockPosition | null {
  let message = position.message;
  let block = position.block - 1;
  let steps = 0;
  while (message >= 0 && steps < ANTHROPIC_BREAKPOINTS.lookbackBlocks) {
    const content = asRecord(messages[message])?.content;
    if (!Array.isArray(content)) return null;
    for (
      block = Math.min(block, content.length - 1);
      block >= 0 && steps < ANTHROPIC_BREAKPOINTS.lookbackBlocks;
      block--, steps++
    ) {
      if (markable(asRecord(content[block]))) return { message, block };
    }
    message -= 1;
    block = Number.POSITIVE_INFINITY;
  }
  return null;
}

/** Breakpoints the client set in `messages`: top-level blocks and the parts of tool results. */
export function countBreakpoints(messages: readonly unknown[]): { count: number; longTtl: boolean } {
  let count = 0;
  let longTtl = false;
  const visit = (value: unknown) => {
    const marker = asRecord(asRecord(value)?.cache_control);
    if (!marker) return;
    count += 1;
    if (marker.ttl === "1h") longTtl = true;
  };
  for (const raw of messages) {
    const content = asRecord(raw)?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      visit(block);
      const nested = asRecord(block)?.content;
      if (Array.isArray(nested)) for (const part of nested) visit(part);
    }
  }
  return { count, longTtl };
}

/** The oldest top-level block carrying a breakpoint (one nested in a tool result is not counted), or null. */
export function oldestBreakpoint(messages: readonly unknown[]): BlockPosition | null {
  for (let message = 0; message < messages.length; message++) {
    const content = asRecord(messages[message])?.content;
    if (!Array.isArray(content)) continue;
    for (let block = 0; block < content.length; block++)
      if (asRecord(asRecord(content[block])?.cache_control)) return { message, block };
  }
  return null;
}

/** A copy of `messages` with the breakpoint on one block taken off (that message copied, the rest shared). */
export function withoutBreakpoint(messages: readonly unknown[], at: BlockPosition): unknown[] {
  const outbound = messages.slice();
  const message = asRecord(messages[at.message])!;
  const content = (message.content as unknown[]).slice();
  const { cache_control: _, ...rest } = asRecord(content[at.block])!;
  content[at.block] = rest;
  outbound[at.message] = { ...message, content };
  return outbound;
}

/** Whether a block already carries a breakpoint. */
export const hasBreakpoint = (messages: readonly unknown[], at: BlockPosition) => {
  const content = asRecord(messages[at.message])?.content;
  return Array.isArray(content) && asRecord(asRecord(content[at.block])?.cache_control) !== null;
};

/** A copy of `messages` with a `cache_control` breakpoint on one block (that message copied, the rest shared). */
export function withBreakpoint(messages: readonly unknown[], at: BlockPosition, longTtl: boolean): unknown[] {
  const outbound = messages.slice();
  const message = asRecord(messages[at.message])!;
  const content = (message.content as unknown[]).slice();
  const marker = longTtl ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  content[at.block] = { ...asRecord(content[at.block])!, cache_control: marker };
  outbound[at.message] = { ...message, content };
  return outbound;
}
