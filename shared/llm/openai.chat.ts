/**
 * OpenAI Chat Completions adapter: tool images are the image parts of `role: "tool"` messages, one
 * carrier per tool message; image parts anywhere else are user uploads. Understands `image_url`
 * parts (`image_url: {url}` or a bare string) and `input_image` parts (`image_url: "..."`), the
 * shapes OpenAI-compatible providers accept. Knows nothing of ceilings or batches: that is policy.ts.
 */
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

/** The URL of an image part, or null when the part is not an image. */
function imageUrl(part: Record<string, unknown> | null): string | null {
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
  const content = asRecord(messages[image.message])?.content;
  const url = Array.isArray(content) ? imageUrl(asRecord(content[image.block])) : null;
  return url?.startsWith("data:") ? url : null;
}

/** The OpenAI Chat Completions format adapter. */
export const openaiAdapter: EvictionAdapter = { format: "openai", inventory, retire, imageData };

/** Where an OpenAI breakpoint can stand: a content part of a message whose content is an array. */
export interface PartPosition {
  readonly message: number;
  readonly block: number;
}

const marker = (part: unknown) => asRecord(asRecord(part)?.prompt_cache_breakpoint) !== null;

/** Explicit `prompt_cache_breakpoint` markers the client set on content parts (GPT-5.6 and later). */
export function countOpenaiBreakpoints(messages: readonly unknown[]): number {
  let count = 0;
  for (const raw of messages) {
    const content = asRecord(raw)?.content;
    if (Array.isArray(content)) for (const part of content) if (marker(part)) count += 1;
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
