/**
 * OpenAI Chat Completions (`/v1/chat/completions`): the conversation is `body.messages`. Tool
 * images are the image parts of `role: "tool"` messages, one carrier per tool message; image parts
 * anywhere else are user uploads. Understands `image_url` parts (`image_url: {url}` or a bare
 * string) and `input_image` parts (`image_url: "..."`), the shapes OpenAI-compatible providers
 * accept. Breakpoints are explicit `prompt_cache_breakpoint` markers (GPT-5.6 and later). Knows
 * nothing of ceilings or batches: that is the eviction policy.
 */
import { chatToolResults } from "./tool-result-blocks";
import { base64Start, dataUrl } from "../media/data-url";
import type { FrontMarker, FrontMarkerRequest, InlineImage, WireFormat } from "./format";
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

/** A content part as far as this file reads one. */
interface Part {
  readonly type?: unknown;
  readonly image_url?: unknown;
  readonly prompt_cache_breakpoint?: unknown;
}

/** The URL of an image part, or null when the part is not an image. */
function imageUrl(part: Part | null): string | null {
  if (part?.type !== "image_url" && part?.type !== "input_image") return null;
  const field = part.image_url;
  if (typeof field === "string") return field;
  const url = asRecord(field)?.url;
  return typeof url === "string" ? url : ""; // e.g. an input_image by file_id: an image, 0 bytes
}

/** A data URL travels inline and counts its full length; an http(s) URL is a reference (0). */
const urlBytes = (url: string) => (url.startsWith("data:") ? url.length : 0);

function inventory(messages: readonly unknown[]): ImageInventory {
  const carriers: Carrier[] = [];
  const uploads: ImageRef[] = [];
  messages.forEach((raw, message) => {
    const entry = asRecord(raw);
    if (!entry || !Array.isArray(entry.content)) return;
    const images: ImageRef[] = [];
    entry.content.forEach((rawPart, block) => {
      const url = imageUrl(asRecord(rawPart));
      if (url !== null) images.push({ message, block, bytes: urlBytes(url) });
    });
    if (images.length === 0) return;
    if (entry.role !== "tool") {
      uploads.push(...images);
      return;
    }
    let bytes = 0;
    for (const image of images) bytes += image.bytes;
    carriers.push({ message, block: -1, images, blocks: images.length, bytes });
  });
  return { carriers, uploads };
}

function retire(
  messages: readonly unknown[],
  retired: readonly Carrier[],
  textOf: RetiredText = fixedRetiredText,
): unknown[] {
  const outbound = messages.slice();
  for (const carrier of retired) {
    const message = asRecord(messages[carrier.message])!;
    const content = (message.content as unknown[]).slice();
    for (const image of carrier.images) {
      // Keep the part family: Responses-style input_image parts become input_text.
      const kind = asRecord(content[image.block])?.type === "input_image" ? "input_text" : "text";
      content[image.block] = retiredPart(content[image.block], kind, textOf(image));
    }
    outbound[carrier.message] = { ...message, content };
  }
  return outbound;
}

function imageData(messages: readonly unknown[], image: ImageRef): string | null {
  const content = contentOf(messages[image.message]);
  const url = content ? imageUrl(asRecord(content[image.block])) : null;
  return url?.startsWith("data:") ? url : null;
}

/** A copy of `messages` with one image part's URL replaced by `image` as a data URL (only the touched message is copied). */
function replaceImage(messages: readonly unknown[], at: ImageRef, image: InlineImage): unknown[] {
  const out = messages.slice();
  const message = asRecord(messages[at.message])!;
  const content = (message.content as unknown[]).slice();
  const part = asRecord(content[at.block])!;
  const url = dataUrl(image.mediaType, image.data);
  const field = part.image_url;
  content[at.block] = {
    ...part,
    image_url: typeof field === "string" || field === undefined ? url : { ...asRecord(field), url },
  };
  out[at.message] = { ...message, content };
  return out;
}

/** Where an OpenAI breakpoint can stand: a content part of a message whose content is an array. */
export interface PartPosition {
  readonly message: number;
  readonly block: number;
}

const marker = (part: unknown) => asRecord((asRecord(part) as Part | null)?.prompt_cache_breakpoint) !== null;

/** Explicit `prompt_cache_breakpoint` markers the client set on content parts (GPT-5.6 and later). */
export function countOpenaiBreakpoints(messages: readonly unknown[]): number {
  let count = 0;
  for (const raw of messages) {
    const content = contentOf(raw);
    if (content) for (const part of content) if (marker(part)) count += 1;
  }
  return count;
}

/**
 * The last content part before message `before` that can carry a breakpoint: the last part of the
 * nearest earlier message whose content is an array of parts (an assistant's tool-call message
 * with no content is passed over; a plain-string message would change its bytes, so the search
 * stops there), or null. OpenAI has no block lookback limit, so the marker stands right before the front.
 */
export function openaiBlockBefore(messages: readonly unknown[], before: number): PartPosition | null {
  for (let message = before - 1; message >= 0; message--) {
    const content = asRecord(messages[message])?.content;
    if (content === null || content === undefined) continue;
    if (!Array.isArray(content)) return null;
    for (let block = content.length - 1; block >= 0; block--)
      if (asRecord(content[block]) !== null) return { message, block };
  }
  return null;
}

/** A copy of `messages` with an explicit `prompt_cache_breakpoint` on one content part (that message copied, the rest shared). */
export function withOpenaiBreakpoint(messages: readonly unknown[], at: PartPosition): unknown[] {
  const outbound = messages.slice();
  const message = asRecord(messages[at.message])!;
  const content = (message.content as unknown[]).slice();
  if (!marker(content[at.block]))
    content[at.block] = { ...asRecord(content[at.block])!, prompt_cache_breakpoint: { mode: "explicit" } };
  outbound[at.message] = { ...message, content };
  return outbound;
}

/**
 * An explicit `prompt_cache_breakpoint` on the last content part before the front message, within
 * the request's budget (the client's markers and the implicit one at the newest message).
 */
function placeFrontMarker(request: FrontMarkerRequest): FrontMarker {
  const { rules } = request;
  // An OpenAI-shaped endpoint serving a model the table does not know (a router's, a local
  // server's) may refuse a field it does not know: only a model known to take it gets one.
  if (!rules.known)
    return { note: "the model is not in the model table: no prompt_cache_breakpoint its endpoint may refuse" };
  const used = countOpenaiBreakpoints(request.original) + 1; // the implicit breakpoint at the newest message
  if (used >= rules.cache.maxBreakpoints)
    return {
      note: `the client already uses ${used} of the ${rules.cache.maxBreakpoints} breakpoints a request may write (the implicit one included)`,
    };
  const at = openaiBlockBefore(request.messages, request.front.message);
  if (!at) return { note: "no content part before the front can carry a breakpoint without changing its bytes" };
  return { messages: withOpenaiBreakpoint(request.messages, at), at };
}

/** The OpenAI Chat Completions wire format. */
export const OPENAI_CHAT: WireFormat = {
  layout: "openai",
  messagesOf: (body) => (Array.isArray(body.messages) ? body.messages : null),
  withMessages: (body, messages) => ({ ...body, messages }),
  toolResults: chatToolResults,
  prefixOf: () => ({}),
  inventory,
  retire,
  imageData,
  // The data is the whole data: URL; the part declares no type of its own.
  inlineImage: (_messages, _image, data) => ({ dataUrlLength: data.length, mislabeledAs: null, keepsOwnSize: false }),
  replaceImage,
  imageBlock: (image) => ({ type: "image_url", image_url: { url: dataUrl(image.mediaType, image.data) } }),
  textBlock: (text) => ({ type: "text", text }),
  blockBase64: (block) => {
    const url = asRecord(block.image_url)?.url;
    return typeof url === "string" ? url.slice(Math.max(0, base64Start(url))) : null;
  },
  toolResultParts: () => null,
  carrierId: (carrier) => `${carrier.message}`,
  // The client's markers are counted against the budget when the marker is placed; none sets a TTL.
  clientBreakpoints: () => ({ count: 0, longTtl: false }),
  placeFrontMarker,
};
