/**
 * vision_analyze: get the image (through the safety gate for URLs), read its header, choose the
 * native or descriptor path, hold a repeat-cap slot for native loads (given back on failure), fit
 * the image into the embed budget, and answer with provider-ready blocks or the auxiliary model's
 * description.
 */
import type { LoadedConfig } from "../config/config.load";
import type { FitOptions, FitResult, RequestContext } from "../ports";
import { effectiveCap } from "../config/repeat-cap.rule";
import { embedCapReached } from "./repeat-cap";
import { callerSession } from "../http/auth";
import { AppError } from "../http/errors";
import { sha256Hex } from "../hash";
import {
  assertAllowedByPolicy,
  assertNoSecretInUrl,
  assertSsrfSafe,
  normalizeUrlForCache,
  parseTargetUrl,
} from "../safety/gate";
import { toRefusal } from "../safety/refusal";
import { safeFetch } from "../safety/safe-fetch";
import { postJson, unexpectedShape } from "../web/providers/http";
import { dataUrl, decodeImageData, toBase64 } from "../media/data-url";
import { DecoderFailure, isOutOfMemory } from "../imaging/codecs/codec";
import { invalidImage, readImageHeader } from "../media/image-header";
import { type BlockStyle, choosePath, contentBlocks } from "./vision.path";
import type { VisionDescriptorResponse, VisionNativeResponse, VisionRequest, VisionResponse } from "./vision.schema";

/** The largest image accepted, as an upload or a download (api.md). */
export const MAX_IMAGE_BYTES = 25 * 1024 * 1024;
const IMAGE_FETCH_TIMEOUT_MS = 30_000;
const AUXILIARY_TIMEOUT_MS = 60_000;
const DEFAULT_QUESTION =
  "Describe this image in detail: its layout, every piece of visible text, and anything notable. Be exact about numbers and labels.";

/** An image as it arrived: bytes now, or a URL to fetch once a cap slot is held. */
type ImageSource = { kind: "bytes"; bytes: Uint8Array } | { kind: "url"; url: URL };

export async function analyzeImage(
  ctx: RequestContext,
  input: VisionRequest,
  upload?: Uint8Array,
): Promise<VisionResponse> {
  const { config } = ctx;
  const source = await receiveImage(ctx, input, upload);
  if (source.kind === "bytes") readImageHeader(source.bytes); // refuse bad formats before any slot is taken
  const { path, style } = choosePath(input.model);

  if (path === "descriptor") {
    const fitted = await fitBytes(ctx, await imageBytes(ctx, source), input);
    return describe(ctx, fitted, input.question);
  }

  if (input.session_id === undefined) {
    // No session, nothing to count against: the load is answered, and the answer says so.
    const fitted = await fitBytes(ctx, await imageBytes(ctx, source), input);
    return nativeAnswer(ctx, fitted, style, { embed_count: null, embed_cap: null, session_hint: SESSION_HINT });
  }
  const sessionId = await callerSession(await ctx.caller(), input.session_id);
  const cap = effectiveCap(config.vision.max_calls_per_image, input.caller);
  // Image identity (only the native path counts): the URL without its fragment, or the bytes' hash.
  // The counter key is a hash of it, so no URL is kept in a session's storage.
  const identity =
    source.kind === "url"
      ? `url:${normalizeUrlForCache(source.url)}`
      : `sha256:${await sha256Hex(source.bytes as Uint8Array<ArrayBuffer>)}`;
  const imageKey = await sha256Hex(identity);
  const reservation = await ctx.ports.embeds.reserve(sessionId, imageKey, cap);
  if (!reservation.ok) {
    ctx.ports.ledger.record({ tool: "vision", counts: { cap_refusals: 1 }, at: ctx.ports.clock() });
    throw embedCapReached(reservation.count, config.vision.max_calls_per_image, input.caller);
  }
  let fitted: FitResult;
  try {
    fitted = await fitBytes(ctx, await imageBytes(ctx, source), input);
  } catch (error) {
    await ctx.ports.embeds
      .release(sessionId, imageKey)
      .catch((cause) => ctx.ports.log.warn("embed_release_failed", { error: String(cause) }));
    throw error;
  }
  return nativeAnswer(ctx, fitted, style, { embed_count: reservation.count, embed_cap: cap });
}

/** What a native answer says about the repeat cap. */
type EmbedTally = Pick<VisionNativeResponse, "embed_count" | "embed_cap" | "session_hint">;

const SESSION_HINT =
  "This load was not counted against a repeat cap because no session_id was given. Send session_id (your agent's session id; over MCP the Mcp-Session-Id is used) so repeat loads of one image in a session are counted.";

/** The native answer: the image's bytes once, inside the provider-ready image block. */
function nativeAnswer(
  ctx: RequestContext,
  fitted: FitResult,
  style: BlockStyle,
  tally: EmbedTally,
): VisionNativeResponse {
  ctx.ports.log.info("vision_fitted", {
    path: "native",
    encode_attempts: fitted.encodeAttempts,
    decodes: fitted.decodes,
    bytes: fitted.data.byteLength,
    data_url_bytes: fitted.dataUrlBytes,
    passed_through: fitted.passedThrough,
  });
  ctx.ports.ledger.record({
    tool: "vision",
    counts: {
      loads: 1,
      [fitted.passedThrough ? "passed_through" : "fitted"]: 1,
      bytes_in: fitted.original.bytes,
      bytes_out: fitted.data.byteLength,
    },
    at: ctx.ports.clock(),
  });
  return {
    success: true,
    path: "native",
    image: {
      media_type: fitted.mediaType,
      width: fitted.width,
      height: fitted.height,
      bytes: fitted.data.byteLength,
      data_url_bytes: fitted.dataUrlBytes,
    },
    original: {
      media_type: fitted.original.mediaType,
      width: fitted.original.width,
      height: fitted.original.height,
      bytes: fitted.original.bytes,
    },
    note: fitted.note,
    ...tally,
    content: contentBlocks(style, fitted.mediaType, toBase64(fitted.data), fitted.note),
  };
}

/** Fits the bytes; a failure is answered as `fitFailure` classifies it, and our own is logged (no image bytes). */
async function fitBytes(ctx: RequestContext, bytes: Uint8Array, input: VisionRequest): Promise<FitResult> {
  try {
    return await ctx.ports.fitImage(bytes, fitOptions(ctx, input));
  } catch (error) {
    const answer = fitFailure(error);
    if (answer instanceof AppError && answer.code === "internal_error") {
      ctx.ports.log.error("vision_internal_error", {
        error: String(error),
        stack: error instanceof Error ? error.stack?.split("\n").slice(0, 8).join("\n") : undefined,
      });
    }
    throw answer;
  }
}

/**
 * What a failed fit tells the caller. A third-party decoder that failed on the caller's bytes
 * (DecoderFailure: data our checks let through but the codec could not take) is the image's
 * fault: 400 `invalid_image`, or 413 when its memory ran out. The engine running out of memory
 * anywhere is 413 too: the image needs more than the isolate has. Any other trap (our SIMD
 * kernels, resampler, encoder) is our bug, never reported as the caller's: 500 `internal_error`.
 */
export function fitFailure(error: unknown): unknown {
  const outOfMemory = () =>
    new AppError(
      413,
      "image_too_large",
      "The image needs more memory to decode than this service has. Send a smaller image, or a JPEG or non-interlaced PNG.",
      { cause: error },
    );
  if (error instanceof DecoderFailure)
    return error.exhausted ? outOfMemory() : invalidImage(error.format, error.what, error);
  if (isOutOfMemory(error)) return outOfMemory();
  if (error instanceof WebAssembly.RuntimeError) {
    return new AppError(
      500,
      "internal_error",
      "The service failed unexpectedly while fitting the image; try again, and report the request id if it persists.",
      { cause: error },
    );
  }
  return error;
}

function fitOptions(loaded: LoadedConfig, input: VisionRequest): FitOptions {
  const { vision } = loaded.config;
  return {
    embedTargetBytes: vision.embed_target_bytes,
    maxLongEdge: vision.max_long_edge,
    maxInputPixels: vision.max_input_pixels,
    region: input.region,
  };
}

/** Uploaded bytes, inline data, or a URL that passed every check of the gate (not yet fetched). */
async function receiveImage(ctx: RequestContext, input: VisionRequest, upload?: Uint8Array): Promise<ImageSource> {
  if (upload) return { kind: "bytes", bytes: checkSize(upload) };
  if ("data" in input.image) return { kind: "bytes", bytes: checkSize(decodeImageData(input.image.data).bytes) };
  const { security } = ctx.config;
  try {
    assertNoSecretInUrl(input.image.url, "image.url");
    const url = parseTargetUrl(input.image.url);
    await assertSsrfSafe(url, {
      allowPrivate: security.allow_private_urls,
      resolver: ctx.ports.dnsResolver(security.dns_resolver_url),
    });
    assertAllowedByPolicy(url, security.website_blocklist);
    return { kind: "url", url };
  } catch (error) {
    throw asVisionError(error);
  }
}

async function imageBytes(ctx: RequestContext, source: ImageSource): Promise<Uint8Array> {
  if (source.kind === "bytes") return source.bytes;
  const { security } = ctx.config;
  try {
    const response = await safeFetch(source.url, {
      fetch: ctx.ports.untrustedFetch ?? ctx.ports.fetch,
      gate: {
        allowPrivate: security.allow_private_urls,
        resolver: ctx.ports.dnsResolver(security.dns_resolver_url),
        blocklist: security.website_blocklist,
      },
      maxBytes: MAX_IMAGE_BYTES,
      timeoutMs: IMAGE_FETCH_TIMEOUT_MS,
      headers: { accept: "image/*" },
      noun: "image",
    });
    return response.body;
  } catch (error) {
    throw asVisionError(error);
  }
}

/** Gate refusals end a vision call with their status (api.md); a body too big is `image_too_large`. */
function asVisionError(error: unknown): unknown {
  const refusal = toRefusal(error);
  if (!refusal) return error;
  if (refusal.code === "too_large")
    return new AppError(
      413,
      "image_too_large",
      `The image at that URL is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MiB; send a smaller image.`,
    );
  if (refusal.code === "unsupported_content") return new AppError(415, "unsupported_media_type", refusal.message);
  return new AppError(refusal.status, refusal.code, refusal.message);
}

function checkSize(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength > MAX_IMAGE_BYTES) {
    throw new AppError(
      413,
      "image_too_large",
      `The image is ${(bytes.byteLength / 1024 / 1024).toFixed(1)} MiB; the limit is 25 MiB. Send a smaller image.`,
    );
  }
  if (bytes.byteLength === 0) throw new AppError(400, "invalid_request", "The image is empty; send the image bytes.");
  return bytes;
}

/** The descriptor path: the fitted image goes to the auxiliary model, only its text comes back. */
async function describe(
  ctx: RequestContext,
  fitted: FitResult,
  question: string | undefined,
): Promise<VisionDescriptorResponse> {
  const { config, secrets } = ctx;
  const { base_url: baseUrl, model } = config.auxiliary.vision;
  if (!baseUrl || !model) {
    // Name only what is missing: an operator who set the base URL is asked for the model alone.
    const missing = [
      ...(baseUrl ? [] : ["auxiliary.vision.base_url (env AUXILIARY_VISION_BASE_URL)"]),
      ...(model ? [] : ["auxiliary.vision.model (env AUXILIARY_VISION_MODEL)"]),
    ];
    throw new AppError(
      503,
      "no_provider",
      `This model cannot see images in tool results, so the image goes to an auxiliary vision model, which is not configured: set ${missing.join(" and ")}.`,
    );
  }
  const settings = {
    name: "auxiliary vision",
    baseUrl,
    apiKey: secrets.AUXILIARY_VISION_API_KEY,
    timeoutMs: AUXILIARY_TIMEOUT_MS,
  };
  const url = dataUrl(fitted.mediaType, toBase64(fitted.data));
  const answer = await postJson(settings, ctx.ports.fetch, "/chat/completions", {
    model,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: `${question ?? DEFAULT_QUESTION}\n\n(${fitted.note})` },
          { type: "image_url", image_url: { url } },
        ],
      },
    ],
  });
  const description = (answer as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  if (typeof description !== "string" || description.trim() === "")
    throw unexpectedShape(settings, "no message content");
  return { success: true, path: "descriptor", description, model };
}
