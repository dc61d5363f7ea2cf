/**
 * Anthropic Messages (`/v1/messages`): the conversation is `body.messages`, with `system`, `tools`
 * and a top-level `cache_control` before it. Tool images are `image` blocks inside the `content`
 * array of a `tool_result` block, one carrier per tool_result; every other top-level `image` block
 * is a user upload. The spec walks messages newest first and sibling tool_results newest first
 * too; the inventory lists carriers in the reverse (chronological) order, which is the same
 * ordering. Breakpoints are `cache_control` markers. Knows nothing of ceilings or batches: that is
 * the eviction policy.
 */
import { imageMediaType } from "./estimate";
import { anthropicToolResults } from "./tool-result-blocks";
import type { ClientBreakpoints, FrontMarker, FrontMarkerRequest, InlineImage, WireFormat } from "./format";
import {
  asRecord,
  contentOf,
  fixedRetiredText,
  type Carrier,
  type ImageInventory,
  type ImageRef,
  type RetiredText,
  retiredPart,
} from "./image-blocks";
import { dataUrlPrefixLength } from "../media/data-url";
import { modelRules } from "./models.table";

/** Anthropic's breakpoint rules (the model table's): at most 4 `cache_control` markers a request; an entry is found within 20 blocks before one. */
const ANTHROPIC_RULES = modelRules("anthropic", undefined).cache;
export const ANTHROPIC_BREAKPOINTS = Object.freeze({
  max: ANTHROPIC_RULES.maxBreakpoints,
  lookbackBlocks: ANTHROPIC_RULES.lookbackBlocks ?? 20,
});

/** An `image` block's `source`. */
interface ImageSource {
  readonly type?: unknown;
  readonly media_type?: unknown;
  readonly data?: unknown;
}

/** A content block as far as this file reads one. */
interface Block {
  readonly type?: unknown;
  readonly source?: unknown;
  readonly content?: unknown;
  readonly cache_control?: unknown;
  readonly transformations?: unknown;
  readonly text?: unknown;
}

const sourceOf = (block: Block | null): ImageSource | null => asRecord(block?.source);

/** Base64 characters of an Anthropic image block; URL and file sources travel as references (0). */
function imageBytes(block: Block): number {
  const source = sourceOf(block);
  if (source?.type === "base64" && typeof source.data === "string") return source.data.length;
  return 0;
}

const isImage = (block: Block | null) => block?.type === "image";

function inventory(messages: readonly unknown[]): ImageInventory {
  const carriers: Carrier[] = [];
  const uploads: ImageRef[] = [];
  messages.forEach((raw, message) => {
    const content = contentOf(raw);
    if (!content) return;
    content.forEach((rawBlock, block) => {
      const entry: Block | null = asRecord(rawBlock);
      if (entry && isImage(entry)) {
        uploads.push({ message, block, bytes: imageBytes(entry) });
        return;
      }
      if (entry?.type !== "tool_result" || !Array.isArray(entry.content)) return;
      const images: ImageRef[] = [];
      entry.content.forEach((rawPart, part) => {
        const nested: Block | null = asRecord(rawPart);
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

/** The block an image reference points at: a top-level block, or a part of a tool_result. */
function blockAt(messages: readonly unknown[], image: ImageRef): Block | null {
  const content = contentOf(messages[image.message]);
  if (!content) return null;
  const block: Block | null = asRecord(content[image.block]);
  if (image.part === undefined) return block;
  const parts = block?.content;
  return Array.isArray(parts) ? asRecord(parts[image.part]) : null;
}

function blockBase64(block: Block | null): string | null {
  const source = sourceOf(block);
  return source?.type === "base64" && typeof source.data === "string" ? source.data : null;
}

/** A copy of `messages` with one image block swapped for `swap(block)` (only the touched message is copied). */
function replaceImage(messages: readonly unknown[], at: ImageRef, image: InlineImage): unknown[] {
  const out = messages.slice();
  const message = asRecord(messages[at.message])!;
  const content = (message.content as unknown[]).slice();
  const swap = (block: Record<string, unknown>) => ({
    ...block,
    source: { type: "base64", media_type: image.mediaType, data: image.data },
  });
  if (at.part === undefined) content[at.block] = swap(asRecord(content[at.block])!);
  else {
    const holder = asRecord(content[at.block])!;
    const parts = (holder.content as unknown[]).slice();
    parts[at.part] = swap(asRecord(parts[at.part])!);
    content[at.block] = { ...holder, content: parts };
  }
  out[at.message] = { ...message, content };
  return out;
}

/**
 * Blocks that cannot carry `cache_control` (thinking, and the beta `fallback` and
 * `mcp_tool_listing`, whose params have no such field), and user uploads, which the service never
 * touches. An empty text block cannot be marked either (`markable`).
 */
const UNMARKABLE = new Set(["thinking", "redacted_thinking", "image", "fallback", "mcp_tool_listing"]);

const markable = (entry: Block | null): boolean =>
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
    const content = contentOf(messages[message]);
    if (!content) return null;
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

/** The `cache_control` marker a block carries, or null. */
const markerOf = (value: unknown): Record<string, unknown> | null => asRecord(asRecord(value)?.cache_control);

/** Breakpoints the client set in `messages`: top-level blocks and the parts of tool results. */
export function countBreakpoints(messages: readonly unknown[]): ClientBreakpoints {
  let count = 0;
  let longTtl = false;
  const visit = (value: unknown) => {
    const marker = markerOf(value);
    if (!marker) return;
    count += 1;
    if (marker.ttl === "1h") longTtl = true;
  };
  for (const raw of messages) {
    const content = contentOf(raw);
    if (!content) continue;
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
    const content = contentOf(messages[message]);
    if (!content) continue;
    for (let block = 0; block < content.length; block++) if (markerOf(content[block])) return { message, block };
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
  const content = contentOf(messages[at.message]);
  return content !== null && markerOf(content[at.block]) !== null;
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

/**
 * A `cache_control` breakpoint just before the front, within the request's budget of them: the
 * client's in messages, those outside (system and tools: 1 when neither is given), and 1 for a
 * top-level `cache_control` (automatic caching). A request that uses them all has its oldest
 * message breakpoint moved to the front instead, when the caller allows it; the marker takes the
 * TTL the client chose.
 */
function placeFrontMarker(request: FrontMarkerRequest): FrontMarker {
  const { messages, front, rules, client } = request;
  const automatic = request.cacheControl === undefined ? 0 : 1;
  const others =
    request.otherBreakpoints ??
    (request.system === undefined && request.tools === undefined
      ? 1
      : countBreakpoints([{ content: [request.tools, request.system].flat() }]).count);
  const used = client.count + others + automatic;
  // All in use: the oldest message breakpoint is the one that moves, when the caller allows it.
  const moved =
    used >= rules.cache.maxBreakpoints && request.moveOldest && used - 1 < rules.cache.maxBreakpoints
      ? oldestBreakpoint(messages)
      : null;
  if (used >= rules.cache.maxBreakpoints && moved === null) {
    return {
      note: `the client already uses ${used} of the ${rules.cache.maxBreakpoints} breakpoints (${client.count} in messages, ${others} outside${automatic ? ", 1 automatic" : ""}); leave one free for the front marker`,
    };
  }
  const at = blockBefore(messages, front);
  if (!at) return { note: "no block before the front can carry a breakpoint without changing its bytes" };
  if (hasBreakpoint(messages, at)) return { note: "a client breakpoint already stands just before the front" };
  return {
    messages: withBreakpoint(
      moved === null ? messages : withoutBreakpoint(messages, moved),
      at,
      client.longTtl || asRecord(request.cacheControl)?.ttl === "1h",
    ),
    at,
  };
}

/** The Anthropic Messages wire format. */
export const ANTHROPIC_MESSAGES: WireFormat = {
  layout: "anthropic",
  messagesOf: (body) => (Array.isArray(body.messages) ? body.messages : null),
  withMessages: (body, messages) => ({ ...body, messages }),
  toolResults: anthropicToolResults,
  prefixOf: (body) => {
    const cacheControl = asRecord(body.cache_control);
    return {
      ...(body.system !== undefined ? { system: body.system } : {}),
      ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
      ...(cacheControl ? { cacheControl } : {}),
    };
  },
  inventory,
  retire,
  imageData: (messages, image) => blockBase64(blockAt(messages, image)),
  inlineImage: (messages, image, data) => {
    const source = sourceOf(blockAt(messages, image));
    const block = blockAt(messages, image);
    const actual = imageMediaType(data);
    const mediaType = typeof source?.media_type === "string" ? source.media_type : "";
    return {
      // Anthropic refuses an image whose bytes are not the media_type declared ("does not match").
      mislabeledAs: actual && source?.media_type !== actual ? actual : null,
      // The caller asked the provider to refuse this image rather than scale it (its coordinates
      // must stay the image's own): it is never fitted here either.
      keepsOwnSize: asRecord(block?.transformations)?.oversized_image === "error",
      dataUrlLength: dataUrlPrefixLength(mediaType) + data.length,
    };
  },
  replaceImage,
  imageBlock: (image) => ({ type: "image", source: { type: "base64", media_type: image.mediaType, data: image.data } }),
  textBlock: (text) => ({ type: "text", text }),
  blockBase64: (block) => {
    const data = sourceOf(block)?.data;
    return typeof data === "string" ? data : null;
  },
  toolResultParts: (block) => {
    const entry = asRecord(block);
    return entry?.type === "tool_result" && Array.isArray(entry.content) ? entry.content : null;
  },
  carrierId: (carrier) => `${carrier.message}/${carrier.block}`,
  clientBreakpoints: countBreakpoints,
  placeFrontMarker,
};
