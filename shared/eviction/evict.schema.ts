/**
 * The `POST /v1/context/evict` request and response (api.md). Messages stay opaque objects here:
 * the format adapters read them, and the route must hand back exactly what the caller sent apart
 * from the retired images. The same schemas feed OpenAPI and the MCP tool schema.
 */
import { z } from "zod";
import { DEFAULT_LIMITS } from "./policy";

const positiveInt = (max: number) => z.number().int().min(1).max(max);

export const EvictLimits = z.object({
  max_blocks: positiveInt(10_000)
    .optional()
    .describe(`Ceiling on image blocks per request (default ${DEFAULT_LIMITS.maxBlocks})`),
  max_bytes: positiveInt(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe(`Ceiling on base64 / data-URL image characters per request (default ${DEFAULT_LIMITS.maxBytes})`),
  batch: positiveInt(1_000)
    .optional()
    .describe(`Tool-image carriers retired per move of the retirement front, 1..1000 (default ${DEFAULT_LIMITS.batch})`),
  floor: z
    .number()
    .int()
    .min(0)
    .max(1_000)
    .optional()
    .describe(
      `Newest tool-image carriers kept when uploads alone break the block ceiling, 0..1000 (default ${DEFAULT_LIMITS.floor})`,
    ),
});
export type EvictLimits = z.infer<typeof EvictLimits>;

export const EvictRequest = z.object({
  format: z
    .enum(["anthropic", "openai"])
    .describe("Message format: Anthropic Messages or OpenAI Chat Completions"),
  messages: z
    .array(z.looseObject({}).describe("One message, passed through untouched unless it carries a retired tool image"))
    .max(100_000)
    .describe("The whole conversation, oldest first, as it would be sent to the provider"),
  limits: EvictLimits.optional().describe("Per-request overrides of the policy's ceilings, batch and floor"),
});
export type EvictRequest = z.infer<typeof EvictRequest>;

export const EvictedImage = z.object({
  message: z.number().int().describe("Index of the message in `messages`"),
  block: z
    .number()
    .int()
    .describe("Index in that message's `content` array: the tool_result block (Anthropic) or the image part (OpenAI)"),
  part: z
    .number()
    .int()
    .optional()
    .describe("Anthropic only: index of the image inside the tool_result's own `content` array"),
  bytes: z.number().int().describe("Base64 / data-URL characters the image carried (0 for a URL reference)"),
});
export type EvictedImage = z.infer<typeof EvictedImage>;

export const EvictStats = z.object({
  image_blocks_before: z.number().int().describe("Image blocks in the request, tool images and uploads"),
  image_blocks_after: z.number().int().describe("Image blocks left in the outbound copy"),
  bytes_before: z.number().int().describe("Image bytes in the request, tool images and uploads"),
  bytes_after: z.number().int().describe("Image bytes left in the outbound copy"),
  reserved_blocks: z.number().int().describe("Image blocks of user uploads: counted, never retired"),
  reserved_bytes: z.number().int().describe("Image bytes of user uploads"),
  carriers_before: z.number().int().describe("Tool results carrying images before eviction"),
  retired_blocks: z.number().int().describe("Image blocks replaced by the retired-image text"),
  fits: z.boolean().describe("Whether the outbound copy is within both ceilings"),
  reason: z.string().optional().describe("Why the request cannot fit (only when `fits` is false)"),
  limits: z
    .object({
      max_blocks: z.number().int().describe("Effective block ceiling"),
      max_bytes: z.number().int().describe("Effective byte ceiling"),
      batch: z.number().int().describe("Effective batch"),
      floor: z.number().int().describe("Effective floor"),
    })
    .describe("The limits applied after defaults"),
});
export type EvictStats = z.infer<typeof EvictStats>;

export const EvictResponse = z.object({
  success: z.literal(true),
  messages: z
    .array(z.unknown().describe("One message of the outbound copy"))
    .describe("The outbound copy, retired images replaced by a fixed text block"),
  retired: z.number().int().describe("Tool-image carriers (tool results) retired, oldest first"),
  evicted: z.array(EvictedImage).describe("Every retired image block, in message order"),
  stats: EvictStats.describe("Counts before and after, and whether the request fits"),
});
export type EvictResponse = z.infer<typeof EvictResponse>;
