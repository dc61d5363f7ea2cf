/** The vision_analyze request and responses (api.md); the same schemas feed OpenAPI and MCP. */
import * as z from "zod";

/** A region's coordinate: any integer within a million either way; the region is clamped to the image. */
const coordinate = z.number().int().min(-1_000_000).max(1_000_000);

/** The one message for an `image` that is neither shape: it shows both. */
export const IMAGE_SHAPES_HINT =
  'image must be an object: {"url": "https://..."} for an image on the web, or {"data": "<base64 or a data: URL>"} for its bytes (or upload it as the multipart field image)';

export const VisionImage = z.union(
  [
    z
      .object({
        url: z
          .string()
          .min(1)
          .max(8192)
          .describe("http(s) URL of the image; fetched through the same safety gate as web_extract"),
      })
      .strict(),
    z
      .object({
        data: z.string().min(1).describe("The image as base64 or a data: URL (up to 25 MiB decoded)"),
        media_type: z
          .string()
          .max(100)
          .optional()
          .describe("Declared type; the type is always detected from the bytes"),
      })
      .strict(),
  ],
  {
    error: (issue) =>
      issue.code !== "invalid_union"
        ? undefined
        : issue.input === undefined
          ? `image is required; ${IMAGE_SHAPES_HINT}`
          : IMAGE_SHAPES_HINT,
  },
);
export type VisionImage = z.infer<typeof VisionImage>;

export const VisionModel = z.object({
  provider: z
    .string()
    .min(1)
    .max(64)
    .describe("The caller's model provider: anthropic, openai, azure, gemini, openrouter, bedrock, vertex, ..."),
  name: z.string().max(200).optional().describe("The caller's model name, e.g. claude-sonnet-4-5"),
});
export type VisionModel = z.infer<typeof VisionModel>;

export const VisionRequest = z.object({
  image: VisionImage.describe("The image: {url} or {data, media_type?}"),
  question: z.string().max(8000).optional().describe("What to look for (used on the descriptor path)"),
  region: z
    .tuple([coordinate, coordinate, coordinate, coordinate])
    .optional()
    .describe("[x1, y1, x2, y2] in original pixels, applied before downscaling"),
  session_id: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe(
      "The agent session: repeat loads of one image are counted per session against vision.max_calls_per_image. Without it the load is not counted (over MCP the Mcp-Session-Id is the default)",
    ),
  caller: z
    .enum(["main", "subagent"])
    .default("main")
    .describe("Who is asking: subagents are capped at 3 embeds per image unless configured"),
  model: VisionModel.optional().describe("The model that will see the result; decides the native or descriptor path"),
});
export type VisionRequest = z.infer<typeof VisionRequest>;

export const VisionNativeResponse = z.object({
  success: z.literal(true),
  path: z.literal("native"),
  image: z
    .object({
      media_type: z.string().describe("Type of the fitted image"),
      width: z.number().describe("Width in pixels"),
      height: z.number().describe("Height in pixels"),
      bytes: z.number().describe("Size of the fitted image in bytes (raw, as original.bytes)"),
      data_url_bytes: z
        .number()
        .describe("Length of the data: URL that embeds it (prefix included); never over vision.embed_target_bytes"),
    })
    .describe("The fitted image; its bytes travel once, in the image block of content"),
  original: z
    .object({
      media_type: z.string().describe("Detected type"),
      width: z.number().describe("Width in pixels"),
      height: z.number().describe("Height in pixels"),
      bytes: z.number().describe("Size as received, in bytes"),
    })
    .describe("The image as it arrived"),
  note: z.string().describe("Scale factor and crop offset, to map coordinates back to the original"),
  embed_count: z
    .number()
    .int()
    .nullable()
    .describe(
      "Loads of this image in this session, this one included; null when no session_id was given (not counted)",
    ),
  embed_cap: z
    .number()
    .int()
    .nullable()
    .describe("The repeat cap that applies to this caller; null: unlimited, or not counted without a session"),
  session_hint: z
    .string()
    .optional()
    .describe("Present when no session_id was given: how to have repeat loads counted"),
  content: z
    .array(z.record(z.string(), z.unknown()))
    .describe(
      "Provider-ready content blocks for the caller's provider: the image block (the only copy of the image's bytes: Anthropic source.data, OpenAI image_url.url as a data: URL, Gemini inline_data.data) and the note as text",
    ),
});
export type VisionNativeResponse = z.infer<typeof VisionNativeResponse>;

export const VisionDescriptorResponse = z.object({
  success: z.literal(true),
  path: z.literal("descriptor"),
  description: z.string().describe("The auxiliary model's description of the image"),
  model: z.string().describe("The auxiliary model that wrote it"),
});
export type VisionDescriptorResponse = z.infer<typeof VisionDescriptorResponse>;

export const VisionResponse = z.union([VisionNativeResponse, VisionDescriptorResponse]);
export type VisionResponse = z.infer<typeof VisionResponse>;
