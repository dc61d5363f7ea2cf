/** The vision_analyze request and responses (api.md); the same schemas feed OpenAPI and MCP. */
import * as z from "zod";

const coordinate = z.number().int().min(0).max(1_000_000);

export const VisionImage = z.union([
  z.object({ url: z.string().min(1).max(8192).describe("http(s) URL of the image; fetched through the same safety gate as web_extract") }).strict(),
  z
    .object({
      data: z.string().min(1).describe("The image as base64 or a data: URL (up to 25 MiB decoded)"),
      media_type: z.string().max(100).optional().describe("Declared type; the type is always detected from the bytes"),
    })
    .strict(),
]);
export type VisionImage = z.infer<typeof VisionImage>;

export const VisionModel = z.object({
  provider: z.string().min(1).max(64).describe("The caller's model provider: anthropic, openai, azure, gemini, openrouter, bedrock, vertex, ..."),
  name: z.string().max(200).optional().describe("The caller's model name, e.g. claude-sonnet-4-5"),
});
export type VisionModel = z.infer<typeof VisionModel>;

export const VisionRequest = z.object({
  image: VisionImage.describe("The image: {url} or {data, media_type?}"),
  question: z.string().max(8000).optional().describe("What to look for (used on the descriptor path)"),
  region: z.tuple([coordinate, coordinate, coordinate, coordinate]).optional().describe("[x1, y1, x2, y2] in original pixels, applied before downscaling"),
  session_id: z.string().min(1).max(256).describe("The agent session; repeat embeds of one image are counted per session"),
  caller: z.enum(["main", "subagent"]).default("main").describe("Who is asking: subagents are capped at 3 embeds per image unless configured"),
  model: VisionModel.optional().describe("The model that will see the result; decides the native or descriptor path"),
});
export type VisionRequest = z.infer<typeof VisionRequest>;

export const VisionNativeResponse = z.object({
  success: z.literal(true),
  path: z.literal("native"),
  image: z.object({ media_type: z.string(), data: z.string(), width: z.number(), height: z.number(), bytes: z.number().describe("Length of the data: URL") }),
  original: z.object({ media_type: z.string(), width: z.number(), height: z.number(), bytes: z.number() }),
  note: z.string(),
  embed_count: z.number().int(),
  embed_cap: z.number().int().nullable(),
  content: z.array(z.record(z.string(), z.unknown())).describe("Provider-ready content blocks"),
});

export const VisionDescriptorResponse = z.object({
  success: z.literal(true),
  path: z.literal("descriptor"),
  description: z.string(),
  model: z.string(),
});

export const VisionResponse = z.union([VisionNativeResponse, VisionDescriptorResponse]);
