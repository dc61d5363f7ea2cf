/**
 * The wire formats, by the messages layout the eviction route and the replay name
 * (`format: "anthropic" | "openai"`): the format that reads a layout's messages as they are.
 * OpenAI Responses presents its items in Chat Completions' layout, so it is reached through its
 * provider's paths only. A new wire format with a layout of its own is one line here.
 */
import { ANTHROPIC_MESSAGES } from "./anthropic.messages";
import type { MessagesLayout, WireFormat } from "./format";
import { OPENAI_CHAT } from "./openai.chat";

export const FORMAT_OF_LAYOUT: Readonly<Record<MessagesLayout, WireFormat>> = {
  anthropic: ANTHROPIC_MESSAGES,
  openai: OPENAI_CHAT,
};

/** The format that reads messages in `layout`. */
export const formatOfLayout = (layout: MessagesLayout): WireFormat => FORMAT_OF_LAYOUT[layout];

/** Whether a value names a messages layout (a session file's `format`, a command-line flag). */
export const isMessagesLayout = (value: unknown): value is MessagesLayout =>
  typeof value === "string" && Object.hasOwn(FORMAT_OF_LAYOUT, value);
