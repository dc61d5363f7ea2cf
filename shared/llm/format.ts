/**
 * One LLM wire format (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses): everything
 * the service knows of where a conversation sits in its request body. The proxy's transform, the
 * eviction, vision's content blocks, the tool registry and the replay reach a body only through one
 * of these objects; none of them branches on a provider's or a format's name. A new wire format is
 * one file implementing this interface, its tests, and one line in `formats.catalog.ts`.
 */
import type { ModelRules } from "./models.table";
import type { Carrier, ImageInventory, ImageRef, RetiredText } from "./image-blocks";
import type { TextToolResult } from "./tool-result-blocks";

/** How the eviction route (`format` of `POST /v1/context/evict`) and the replay name a messages layout. */
export type MessagesLayout = "anthropic" | "openai";

/** An image as inline data: its media type and its base64 bytes. */
export interface InlineImage {
  readonly mediaType: string;
  readonly data: string;
}

/** What an inline image's block says of it beside its data. */
export interface InlineImageFacts {
  /** Its length as a data: URL (what the embed budget weighs). */
  readonly dataUrlLength: number;
  /** The media type its bytes are, when its block declares another one (the provider refuses it), else null. */
  readonly mislabeledAs: string | null;
  /** The caller asked the provider to refuse it rather than scale it: it is never fitted. */
  readonly keepsOwnSize: boolean;
}

/** What the eviction weighs of a request besides its messages (Anthropic: system, tools, automatic caching). */
export interface ConversationPrefix {
  readonly system?: unknown;
  readonly tools?: unknown[];
  /** A top-level `cache_control` (Anthropic's automatic caching). */
  readonly cacheControl?: Record<string, unknown>;
}

/** The client's own breakpoints in the messages: how many, and whether one asks for the long TTL. */
export interface ClientBreakpoints {
  readonly count: number;
  readonly longTtl: boolean;
}

/** What the front marker is placed from (the eviction's cost strategy, `manage_cache`). */
export interface FrontMarkerRequest {
  /** The messages as the caller sent them (the client's breakpoints are counted there). */
  readonly original: readonly unknown[];
  /** The outbound copy (tool images already retired) the marker goes into. */
  readonly messages: unknown[];
  /** The oldest tool-image carrier still sent: the marker stands just before it. */
  readonly front: Carrier;
  readonly rules: ModelRules;
  /** `clientBreakpoints(original)`. */
  readonly client: ClientBreakpoints;
  /** All breakpoints in use: the oldest message breakpoint may move to the front. */
  readonly moveOldest: boolean;
  /** The request's top-level `cache_control`, when it has one. */
  readonly cacheControl?: unknown;
  /** Breakpoints outside the messages, when the caller says how many. */
  readonly otherBreakpoints?: number;
  readonly system?: unknown;
  readonly tools?: unknown[];
}

/** Where a front marker went, or why it did not. */
export type FrontMarker = { messages: unknown[]; at: { message: number; block: number } } | { note: string };

export interface WireFormat {
  /** The layout of its messages (Responses presents its items as Chat Completions messages). */
  readonly layout: MessagesLayout;

  // The body
  /** The messages of a body (a view for a body that holds no `messages` as such), or null when there are none. */
  messagesOf(body: Record<string, unknown>): unknown[] | null;
  /** A copy of `body` carrying `messages` (an edited copy of `messagesOf(body)`, same length). */
  withMessages(body: Record<string, unknown>, messages: readonly unknown[]): Record<string, unknown>;
  /** What the eviction weighs before the messages. */
  prefixOf(body: Record<string, unknown>): ConversationPrefix;

  // Tool results
  /**
   * Every text tool result of the messages view, oldest first, with the tool that wrote it (any
   * size: the eviction picks candidates). `body` is read where the view lacks the call ids (Responses).
   */
  toolResults(messages: readonly unknown[], body?: Record<string, unknown>): TextToolResult[];

  // Image blocks
  /** Classify every image block; never modifies `messages`. */
  inventory(messages: readonly unknown[]): ImageInventory;
  /**
   * A copy of `messages` in which every image of `retired` is replaced by one text block of
   * `textOf(image)` (`RETIRED_IMAGE_TEXT` by default). Untouched messages are shared, touched ones
   * copied; the input is never modified.
   */
  retire(messages: readonly unknown[], retired: readonly Carrier[], textOf?: RetiredText): unknown[];
  /** The inline data (base64 or data: URL) of one image of `messages`, or null for a reference. */
  imageData(messages: readonly unknown[], image: ImageRef): string | null;
  /** What the block of an inline image (its `imageData`) says of it. */
  inlineImage(messages: readonly unknown[], image: ImageRef, data: string): InlineImageFacts;
  /** A copy of `messages` with one image replaced by `image` (only the touched message is copied). */
  replaceImage(messages: readonly unknown[], at: ImageRef, image: InlineImage): unknown[];
  /** A tool result's image block of this format. */
  imageBlock(image: InlineImage): Record<string, unknown>;
  /** A tool result's text block of this format. */
  textBlock(text: string): Record<string, unknown>;
  /** The base64 bytes of an image block of this format, or null. */
  blockBase64(block: Record<string, unknown>): string | null;
  /** The parts of a block that nests them (Anthropic's `tool_result`), or null. */
  toolResultParts(block: unknown): unknown[] | null;
  /** A tool-image carrier's id in the replay's segments (its tool result). */
  carrierId(carrier: Carrier): string;

  // Breakpoints
  /** The client's own breakpoints in `messages` that the eviction reads (TTL, marker budget). */
  clientBreakpoints(messages: readonly unknown[]): ClientBreakpoints;
  /** The outbound copy with a breakpoint just before the front, or why none is placed. */
  placeFrontMarker(request: FrontMarkerRequest): FrontMarker;
}
