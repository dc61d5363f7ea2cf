/**
 * The `POST /v1/context/evict` request and response (api.md). Messages stay opaque objects here:
 * the format adapters read them, and the route must hand back exactly what the caller sent apart
 * from the retired images. The same schemas feed OpenAPI and the MCP tool schema.
 */
import * as z from "zod";
import { FIELD } from "../http/validate";
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
    .describe(
      `Tool-image carriers retired per move of the retirement front, 1..1000 (default ${DEFAULT_LIMITS.batch})`,
    ),
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

export const ImageDescription = z.object({
  message: z.number().int().min(0).describe("Index of the message in `messages` that holds the image"),
  block: z
    .number()
    .int()
    .min(0)
    .describe(
      "Index in that message's `content`: the tool_result block (Anthropic) or the image part (OpenAI), as in `evicted[]`",
    ),
  part: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("Anthropic only: index of the image inside the tool_result's own `content`"),
  text: z
    .string()
    .min(1)
    .max(8_000)
    .describe(
      "The image's description from vision_analyze (descriptor path); a retired image becomes this text instead of the fixed placeholder",
    ),
});
export type ImageDescription = z.infer<typeof ImageDescription>;

/** Fields that only the cost strategy reads: sent with `hermes` they are a mistake worth a 400. */
const COST_ONLY = [
  "provider",
  "model",
  "manage_cache",
  "last_request_at",
  "session_id",
  "other_breakpoints",
  "requests_left",
  "system",
  "tools",
  "cache_control",
] as const;

export const EvictRequest = z
  .object({
    format: z.enum(["anthropic", "openai"]).describe("Message format: Anthropic Messages or OpenAI Chat Completions"),
    messages: z
      .array(z.looseObject({}).describe("One message, passed through untouched unless it carries a retired tool image"))
      .max(100_000)
      .describe("The whole conversation, oldest first, as it would be sent to the provider"),
    limits: EvictLimits.optional().describe("Per-request overrides of the policy's ceilings, batch and floor"),
    strategy: z
      .enum(["hermes", "cost"])
      .default("hermes")
      .describe(
        "hermes (default): the batched 20/8/3 policy exactly; cost: the provider's true ceilings, retirement down to the floor when the price table or a cold cache makes it pay, and (Anthropic, manage_cache) a breakpoint at the retirement front",
      ),
    provider: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "cost: whose model table applies (anthropic, openai; azure counts as openai); default: the format's provider. docs/eviction.md lists the table",
      ),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "cost: the model, for its prices (cache write and read multipliers), image ceilings (Anthropic 100 or 600 images), cache TTL and breakpoint rules from the model table; an unknown model gets its provider's default",
      ),
    manage_cache: z
      .boolean()
      .optional()
      .describe(
        "cost: let the service put one breakpoint just before the retirement front (Anthropic cache_control; OpenAI prompt_cache_breakpoint from GPT-5.6), never moving the client's own, never exceeding the 4 a request may write; stats.cache_marker says where",
      ),
    other_breakpoints: z
      .number()
      .int()
      .min(0)
      .max(4)
      .optional()
      .describe(
        "cost, manage_cache: breakpoints the client sets outside `messages` (system, tools), which the service cannot see (default 1: the system prompt)",
      ),
    last_request_at: z.iso
      .datetime({ offset: true })
      .optional()
      .describe(
        "cost: ISO time of the session's previous request; a gap over the cache TTL (5 minutes) means the cache is cold",
      ),
    session_id: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe(
        "cost: the agent session; the service remembers its retirement front and last call for 24 h, which a cold-cache retirement needs to stay retired",
      ),
    requests_left: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe(
        "cost, with session_id: how many more requests the agent expects this session to make (e.g. its remaining iteration budget, when its sessions use it); this request's retirement is then judged over that many reads (at most as many again as so far) instead of a guess. An over-estimate can retire too early",
      ),
    system: z
      .unknown()
      .optional()
      .describe(
        "cost: the request's system prompt (string or blocks), counted in the prompt's tokens and its breakpoints; never changed or returned",
      ),
    tools: z
      .array(z.unknown().describe("One tool definition"))
      .max(10_000)
      .optional()
      .describe(
        "cost: the request's tool definitions, counted in the prompt's tokens and its breakpoints; never changed or returned",
      ),
    cache_control: z
      .looseObject({})
      .optional()
      .describe(
        "cost, Anthropic: the request's top-level cache_control (automatic caching); it counts toward the 4 breakpoints, and its ttl 1h toward the TTL",
      ),
    descriptions: z
      .array(ImageDescription)
      .max(100_000)
      .optional()
      .describe(
        "Descriptions of tool images from vision_analyze: a retired image with one becomes that text (deterministically) instead of the fixed placeholder",
      ),
  })
  .superRefine((request, ctx) => {
    if (request.strategy === "hermes") {
      for (const field of COST_ONLY) {
        if (request[field] !== undefined) {
          ctx.addIssue({ code: "custom", path: [field], message: `${field} applies to "strategy": "cost" only` });
        }
      }
    }
    if (request.requests_left !== undefined && request.session_id === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["requests_left"],
        message:
          "requests_left needs session_id: a retirement made for the session's future must stay in place on the next request, which only a remembered session can promise",
      });
    }
    request.descriptions?.forEach((entry, i) => {
      if (entry.message >= request.messages.length) {
        ctx.addIssue({
          code: "custom",
          path: ["descriptions", i, "message"],
          message: `${FIELD} is ${entry.message}, but messages holds only ${request.messages.length}`,
        });
      }
    });
  });
export type EvictRequest = z.input<typeof EvictRequest>;

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
  reason: z
    .enum(["under_ceiling", "held", "ceiling", "price", "cold_cache", "price_tier"])
    .describe(
      "The rule that decided the front, the same under both strategies (docs/api.md): under_ceiling (nothing retired), held (where the previous request left it), ceiling (the request would pass a ceiling), price (cost: the reads saved pay for the rewrite), cold_cache (cost: the cache had expired, nothing cached is rewritten), price_tier (cost: retired to keep the prompt under the model's price tier)",
    ),
  strategy: z.enum(["hermes", "cost"]).optional().describe("cost only: the strategy applied"),
  problem: z.string().optional().describe("Why the request cannot fit (only when `fits` is false)"),
  explanation: z
    .string()
    .optional()
    .describe(
      'cost only: one sentence on what moved and why, e.g. "Retired 8 tool images because the cache was cold: nothing cached is rewritten."',
    ),
  estimate: z
    .object({
      model: z
        .string()
        .describe("The model-table family whose prices were used (`<provider> default` for an unknown model)"),
      cache_write_tokens: z
        .number()
        .int()
        .describe("Estimated cache-write tokens of this request under the chosen move"),
      cache_write_usd: z.number().describe("The same in USD at the model's write price"),
      hermes: z
        .object({
          retired: z.number().int().describe("Carriers hermes (20/8/3, or `limits`) would have retired"),
          cache_write_tokens: z.number().int().describe("Estimated cache-write tokens of this request under hermes"),
          cache_write_usd: z.number().describe("The same in USD"),
        })
        .describe("The same request under hermes, for comparison"),
    })
    .optional()
    .describe("cost only: this request's estimated cache writes, under the chosen move and under hermes"),
  cache_marker: z
    .object({
      message: z.number().int().describe("Index of the message whose block got the breakpoint"),
      block: z.number().int().describe("Index of that block in the message's `content`"),
    })
    .optional()
    .describe(
      "cost, manage_cache: the one breakpoint the service placed (the only marker it ever moves), just before the front",
    ),
  cache_marker_note: z.string().optional().describe("cost, manage_cache: why no breakpoint was placed"),
  cold_cache: z
    .boolean()
    .optional()
    .describe("cost only: whether the provider's cache was judged expired since the previous request"),
  limits: z
    .object({
      max_blocks: z
        .number()
        .int()
        .describe(
          "Effective block ceiling (cost: the model's true ceiling from the model table unless `limits.max_blocks` says otherwise)",
        ),
      max_bytes: z.number().int().describe("Effective byte ceiling"),
      batch: z
        .number()
        .int()
        .describe(
          "Effective batch (hermes; cost retires down to the floor in one move and reports the batch it was sent)",
        ),
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
