/**
 * Native or descriptor (docs/vision.md, "Two paths"): native when the caller's model sees images in
 * tool results, and the provider-ready content blocks for that provider.
 */
import { ANTHROPIC_MESSAGES } from "../llm/anthropic.messages";
import type { WireFormat } from "../llm/format";
import { asRecord } from "../llm/image-blocks";
import { OPENAI_CHAT } from "../llm/openai.chat";
import type { VisionModel } from "./vision.schema";

export type VisionPath = "native" | "descriptor";
export type BlockStyle = "anthropic" | "openai" | "gemini";

/** Providers that take images in tool results for their vision models, and the block style each reads (a Map: a name like "constructor" is no provider). */
const NATIVE_PROVIDERS: ReadonlyMap<string, BlockStyle> = new Map([
  ["anthropic", "anthropic"],
  ["openai", "openai"],
  ["azure", "openai"],
  ["azure-openai", "openai"],
  ["azure_openai", "openai"],
]);

/** Providers that front other vendors' models: the model name decides. */
const FRONTS = new Set(["openrouter", "bedrock", "vertex", "vertex-ai", "google-vertex", "aws-bedrock"]);
const GEMINI_PROVIDERS = new Set(["gemini", "google", "google-ai", "googleai"]);

/** Model names known to be text-only on otherwise native providers. */
const TEXT_ONLY = /(^|\/)(gpt-3\.5|o1-mini|o3-mini|text-|davinci|babbage|claude-2|claude-instant)/i;

function styleOfModelName(name: string): BlockStyle | null {
  const n = name.toLowerCase();
  if (n.includes("claude")) return "anthropic";
  if (/(^|\/)(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|o3|o4|chatgpt-4o)/.test(n)) return "openai";
  if (/gemini-3/.test(n)) return "gemini";
  return null;
}

/**
 * Which path serves this caller, and in which block style.
 * @example choosePath({ provider: "openrouter", name: "anthropic/claude-sonnet-4.5" }) // { path: "native", style: "openai" }
 */
export function choosePath(model: VisionModel | undefined): { path: VisionPath; style: BlockStyle } {
  if (!model) return { path: "native", style: "anthropic" };
  const provider = model.provider.trim().toLowerCase();
  const name = model.name ?? "";
  if (name && TEXT_ONLY.test(name)) return { path: "descriptor", style: "openai" };
  const native = NATIVE_PROVIDERS.get(provider);
  if (native) return { path: "native", style: native };
  if (GEMINI_PROVIDERS.has(provider)) {
    return /gemini-3/i.test(name) ? { path: "native", style: "gemini" } : { path: "descriptor", style: "gemini" };
  }
  if (FRONTS.has(provider)) {
    const style = styleOfModelName(name);
    // OpenRouter's API is OpenAI's chat completions whatever the model behind it: image_url parts.
    if (style) return { path: "native", style: provider === "openrouter" ? "openai" : style };
  }
  return { path: "descriptor", style: "openai" };
}

/** How a block style writes an image and a note: an LLM wire format's, or Gemini's `inline_data` parts. */
type BlockWriter = Pick<WireFormat, "imageBlock" | "textBlock" | "blockBase64">;

const GEMINI_BLOCKS: BlockWriter = {
  imageBlock: (image) => ({ inline_data: { mime_type: image.mediaType, data: image.data } }),
  textBlock: (text) => ({ text }),
  blockBase64: (block) => {
    const inline = asRecord(block.inline_data)?.data;
    return typeof inline === "string" ? inline : null;
  },
};

/** The writer of each block style, in the order a block's image is looked for. */
const WRITERS: Readonly<Record<BlockStyle, BlockWriter>> = {
  anthropic: ANTHROPIC_MESSAGES,
  openai: OPENAI_CHAT,
  gemini: GEMINI_BLOCKS,
};

/** Content blocks a client can put straight into its provider's tool result. */
export function contentBlocks(
  style: BlockStyle,
  mediaType: string,
  base64: string,
  note: string,
): Record<string, unknown>[] {
  const writer = WRITERS[style];
  return [writer.imageBlock({ mediaType, data: base64 }), writer.textBlock(note)];
}

/** The base64 bytes inside a provider-ready image block, whichever style wrote it, or null. */
export function blockImageBase64(block: Record<string, unknown>): string | null {
  for (const writer of Object.values(WRITERS)) {
    const data = writer.blockBase64(block);
    if (data !== null) return data;
  }
  return null;
}
