/**
 * What the wire formats (format.ts) tell the eviction about a conversation: where every image sits, which are
 * retirable tool images (grouped by the tool result that carries them) and which are user uploads,
 * and the text a retired image becomes. Format-neutral, so the service, the replay and the tests
 * handle Anthropic and OpenAI conversations the same way.
 */
/** Blocks and bytes of some images: one carrier, the uploads, or any sum of them. */
export interface ImageLoad {
  /** Image blocks (one tool result may carry several). */
  readonly blocks: number;
  /** Base64 / data-URL characters; a URL-referenced image counts 0. */
  readonly bytes: number;
}

/**
 * The role a format's view gives a message that holds a computer-use screenshot (OpenAI Responses
 * `computer_call_output`): its image is fitted like a tool image, and never retired, since the
 * item takes nothing but a screenshot (the eviction counts it as an upload).
 */
export const COMPUTER_SCREENSHOT_ROLE = "computer_screenshot";

/**
 * The text a retired image becomes. Fixed bytes, nothing time- or request-dependent, so every
 * later request carries the exact same prefix and the provider's cache keeps serving it.
 */
export const RETIRED_IMAGE_TEXT = "[screenshot removed to save context]";

/** Where one image block sits and what it weighs. */
export interface ImageRef {
  /** Index in the `messages` array. */
  readonly message: number;
  /** Index in that message's `content` array. */
  readonly block: number;
  /** Index inside the block's own `content` array when the image is nested (Anthropic tool_result). */
  readonly part?: number;
  /** Base64 / data-URL characters; 0 for an image referenced by URL or file id. */
  readonly bytes: number;
}

/** One retirable unit: a tool result with the images it carries. Retired all at once. */
export interface Carrier extends ImageLoad {
  /** Index in the `messages` array. */
  readonly message: number;
  /** Index in the message's `content` array (Anthropic tool_result); -1 for a whole OpenAI tool message. */
  readonly block: number;
  readonly images: readonly ImageRef[];
  /** Set on a text tool result taken as a carrier (no images): its characters (./tool-results.ts). */
  readonly textChars?: number;
}

/** Every image of a conversation, classified. */
export interface ImageInventory {
  /** Tool-image carriers, oldest first (reverse of the newest-first walk of the spec). */
  readonly carriers: readonly Carrier[];
  /** User uploads: counted against the ceilings, never rewritten. */
  readonly uploads: readonly ImageRef[];
}

/** The text a retired image becomes: `RETIRED_IMAGE_TEXT`, or its description when one is known. */
export type RetiredText = (image: ImageRef) => string;

/**
 * The text part that takes a retired image's place, keeping a cache breakpoint the client set on
 * the image (Anthropic's `cache_control`, OpenAI's `prompt_cache_breakpoint`): the client's own
 * breakpoints never move or disappear.
 */
export function retiredPart(image: unknown, type: "text" | "input_text", text: string): Record<string, unknown> {
  const part: Record<string, unknown> = { type, text };
  const from = asRecord(image);
  for (const field of ["cache_control", "prompt_cache_breakpoint"])
    if (from && from[field] !== undefined) part[field] = from[field];
  return part;
}

/** The default: every retired image becomes `RETIRED_IMAGE_TEXT`. */
export const fixedRetiredText: RetiredText = () => RETIRED_IMAGE_TEXT;

/**
 * The text of a retired image whose vision_analyze description is known: fixed wording around the
 * caller's text, so the same image always becomes the same bytes and the model keeps what it saw.
 */
export const describedImageText = (description: string) =>
  `[screenshot removed to save context; it showed: ${description}]`;

/** A plain-object view of an unknown JSON value, or null. */
export function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** A message's content blocks, or null when its content is not an array (a plain string, none). */
export function contentOf(message: unknown): unknown[] | null {
  const content = asRecord(message)?.content;
  return Array.isArray(content) ? content : null;
}
