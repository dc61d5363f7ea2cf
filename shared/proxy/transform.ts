/**
 * The outbound transform of a proxied conversation (docs/proxy.md): fit images the provider should
 * not get as they are, retire old tool images through the eviction module (the same decision code
 * as `POST /v1/context/evict`), and, on Anthropic, re-plan the message breakpoints so one stands at
 * the retirement front. Deterministic: the same body and session memory give the same bytes out.
 */
import { anthropicAdapter } from "../eviction/anthropic";
import {
  evictRemembering,
  outboundEviction,
  readSessionRecord,
  type SessionMemory,
  writeSessionRecord,
} from "../eviction/evict.service";
import { imageMediaType, imageSize } from "../eviction/estimate";
import { asRecord, type ImageRef } from "../eviction/inventory";
import { openaiAdapter } from "../eviction/openai";
import { retiredToolResultText, textToolResults, toolResultCandidates } from "../eviction/tool-results";
import { sha256Hex } from "../hash";
import { AppError } from "../http/errors";
import { modelRules, type ModelRules, type PriceOverrides } from "../models/models.table";
import type { AppPorts } from "../ports";
import { base64Start, dataUrl, dataUrlPrefixLength, decodeImageData, toBase64 } from "../media/data-url";
import { isShadowState, type ShadowEstimate, shadowStep } from "./shadow";
import {
  COMPUTER_SCREENSHOT_ROLE,
  type ConversationFormat,
  type LlmProviderSpec,
} from "./providers/llm-provider.types";

export type ProxyStrategy = "cost" | "hermes" | "off";

export interface TransformSettings {
  /** vision.embed_target_bytes: a tool image's data-URL length over it is fitted. */
  readonly embedTargetBytes: number;
  /** vision.max_long_edge. */
  readonly maxLongEdge: number;
  /** vision.max_input_pixels: the fitter refuses larger images before decoding. */
  readonly maxInputPixels: number;
  /** proxy.fit_user_images. */
  readonly fitUserImages: boolean;
  /** proxy.strategy. */
  readonly strategy: ProxyStrategy;
  /** pricing.models: the operator's token prices, over the model table's. */
  readonly priceOverrides?: PriceOverrides;
  /** False on a path that does not reach the provider's cache (`count_tokens`): the session memory is read, not written. */
  readonly remembers?: boolean;
  /** The request body's bytes as received: over the model's request total, uploads are fitted too. */
  readonly requestBytes?: number;
  /** proxy.retire_tool_results, or the request's X-Edge-Retire-Tool-Results: text tool results are carriers too (cost). */
  readonly retireToolResults?: boolean;
  /** proxy.tool_result_min_chars: a text tool result over it is a candidate. */
  readonly toolResultMinChars?: number;
}

/** What the transform did to one request. */
export interface TransformOutcome {
  /** The body to send: the caller's own object when nothing changed. */
  readonly body: Record<string, unknown>;
  readonly changed: boolean;
  /** Image blocks sent in their fitted form (an image re-sent in a later request counts again). */
  readonly fitted: number;
  /** Images fitted for the first time (a fit found stored, from an earlier request, is not counted). */
  readonly firstFits: number;
  /** Images that needed a fit the fitter refused (left as they were). */
  readonly fitSkipped: number;
  /** Tool image blocks retired (sent as the retired-image text). */
  readonly retired: number;
  /** Of those, the blocks the previous request of the session still carried as images. */
  readonly retiredNow: number;
  /** Text tool results sent retired (retire_tool_results), their characters not sent, and those newly retired. */
  readonly toolResults: { readonly retired: number; readonly charsSaved: number; readonly retiredNow: number };
  /** The session as sent and as the agent sent it, through the shadow; null when it did not run (no image). */
  readonly estimate: ShadowEstimate | null;
  /** The eviction module's rule for this request (cost) or null when it did not run. */
  readonly rule: string | null;
}

type Ports = Pick<AppPorts, "cache" | "clock" | "fitImage">;

const ADAPTERS = { anthropic: anthropicAdapter, openai: openaiAdapter } as const;

/** A fitted image kept in the cache store (docs/storage.md: `proxy:v1:fit:`). */
interface FittedImage {
  mediaType: string;
  data: string;
}
/** What is kept for an image the fitter refused, so a session's later requests do not decode it again. */
interface RefusedImage {
  refused: true;
}
const FIT_TTL_MS = 24 * 60 * 60_000;
/**
 * Most images fitted in one request: each is a decode and an encode (up to a few hundred ms of CPU
 * for a large screenshot) and two cache-store operations (Workers KV allows 1,000 a request).
 */
export const MAX_FITS = 100;

/**
 * Transforms a parsed request body of a proxied path.
 * @param sessionKey the session memory's key (X-Session-Id or derived), already hashed
 */
export async function transformConversation(
  body: Record<string, unknown>,
  spec: LlmProviderSpec,
  format: ConversationFormat,
  sessionKey: string,
  settings: TransformSettings,
  ports: Ports,
): Promise<TransformOutcome> {
  const original = format.messagesOf(body);
  const unchanged: TransformOutcome = {
    body,
    changed: false,
    fitted: 0,
    firstFits: 0,
    fitSkipped: 0,
    retired: 0,
    retiredNow: 0,
    toolResults: NO_TOOL_RESULTS,
    estimate: null,
    rule: null,
  };
  if (!original || original.length === 0) return unchanged;
  const model = typeof body.model === "string" ? body.model : undefined;
  const rules = modelRules(spec.name, model, settings.priceOverrides);

  const fit = await fitImages(original, format.eviction, rules, settings, ports);
  let messages = fit.messages;
  let retired = 0;
  let rule: string | null = null;
  let breakpointsMoved = false;

  // Without an image there is nothing to fit, retire or mark, and the request goes as it came: the
  // session's record (eviction memory and shadow) is neither read nor written (two cache-store
  // round trips saved on every text-only request). With one, it is read once and written once.
  const hasToolImages = fit.toolImages > 0;
  // Text tool results are carriers too only when asked, and only under cost (docs/proxy.md); off,
  // a text-only request goes as it came.
  const texts =
    settings.retireToolResults === true && settings.strategy === "cost"
      ? toolResultCandidates(textToolResults(format.eviction, original, body), settings.toolResultMinChars ?? 8_192)
      : [];
  const record = fit.images > 0 || texts.length > 0 ? await readSessionRecord(sessionKey, ports) : null;
  let remember: SessionMemory | null = record?.memory ?? null;
  let retiredNow = 0;
  let toolResults = NO_TOOL_RESULTS;
  if (settings.strategy !== "off" && (hasToolImages || texts.length > 0)) {
    // cost: the eviction module's entry for the proxy (the route's own decision code), which may
    // move the caller's oldest message breakpoint to the front; hermes: the route's batched 20/8/3.
    const { evict, planning } = outboundEviction({
      format: format.eviction,
      messages,
      ...(model === undefined ? {} : { model: model.slice(0, 200) }),
      sessionKey,
      ...(format.eviction === "anthropic" && body.system !== undefined ? { system: body.system } : {}),
      ...(format.eviction === "anthropic" && Array.isArray(body.tools) ? { tools: body.tools } : {}),
      ...(format.eviction === "anthropic" && asRecord(body.cache_control)
        ? { cacheControl: asRecord(body.cache_control)! }
        : {}),
      movesClientBreakpoint: true,
      ...(settings.priceOverrides === undefined ? {} : { priceOverrides: settings.priceOverrides }),
    });
    const withTexts = texts.length > 0 ? { ...planning, toolResults: texts } : planning;
    const out =
      settings.strategy === "cost"
        ? evictRemembering(evict, record?.memory ?? null, ports.clock(), withTexts)
        : evictRemembering(
            { format: format.eviction, messages: messages as Record<string, unknown>[], strategy: "hermes" },
            null,
            ports.clock(),
          );
    if (settings.strategy === "cost") remember = out.remember;
    retired = out.response.stats.retired_blocks;
    retiredNow = out.retiredNow;
    if (out.toolResults.retired.length > 0)
      toolResults = {
        retired: out.toolResults.retired.length,
        charsSaved: out.toolResults.retired.reduce(
          (sum, result) => sum + Math.max(0, result.chars - retiredToolResultText(result.tool, result.chars).length),
          0,
        ),
        retiredNow: out.toolResults.retiredNow,
      };
    rule = out.response.stats.reason ?? null;
    breakpointsMoved = out.response.stats.cache_marker !== undefined;
    if (breakpointsMoved || out.response.retired > 0) messages = out.response.messages;
  }

  const changed = !(
    fit.fitted === 0 &&
    fit.relabeled === 0 &&
    retired === 0 &&
    toolResults.retired === 0 &&
    !breakpointsMoved
  );
  const sent = changed ? format.withMessages(body, messages) : body;
  let estimate: ShadowEstimate | null = null;
  if (record !== null) {
    // The session as the agent sent it beside the session as sent (shadow.ts), kept in the same
    // record. An estimate never fails a request: a body it cannot walk is counted at its bill.
    const stored = record.extra.shadow;
    let step: ReturnType<typeof shadowStep> | null = null;
    try {
      step = shadowStep(isShadowState(stored) ? stored : null, body, sent, ports.clock(), rules);
    } catch {
      step = null;
    }
    estimate = step?.estimate ?? null;
    if (settings.remembers !== false)
      await writeSessionRecord(
        sessionKey,
        { memory: remember, extra: { ...record.extra, shadow: step?.state ?? null } },
        ports,
      );
  }
  if (!changed) return { ...unchanged, fitSkipped: fit.skipped, rule, estimate };
  return {
    body: sent,
    changed: true,
    fitted: fit.fitted,
    firstFits: fit.firstFits,
    fitSkipped: fit.skipped,
    retired,
    retiredNow,
    toolResults,
    estimate,
    rule,
  };
}

const NO_TOOL_RESULTS: TransformOutcome["toolResults"] = Object.freeze({ retired: 0, charsSaved: 0, retiredNow: 0 });

// ---------------------------------------------------------------------------------------------
// Fitting

/**
 * Fits every image that should not go as it is: a tool image (a computer-use screenshot too) over
 * the embed budget or the long edge, or one the model would refuse; a user upload only where the
 * model would refuse it (over its per-image bytes, its longest edge, or the edge it allows when a
 * request carries many images), or over the budget when `fitUserImages` is on, or, oldest first,
 * while the request would be over the model's total (Anthropic's 32 MB). A fit's long edge
 * is at most what the model takes; at most MAX_FITS a request. A fit (or a refusal) is looked up
 * by the hash of the image and the settings first. An Anthropic image whose bytes are another type
 * than its `media_type` says, and that is not fitted, is relabelled; one whose block says
 * `transformations.oversized_image: "error"` is never fitted.
 */
async function fitImages(
  messages: unknown[],
  eviction: "anthropic" | "openai",
  rules: ModelRules,
  settings: TransformSettings,
  ports: Ports,
): Promise<{
  messages: unknown[];
  fitted: number;
  firstFits: number;
  skipped: number;
  relabeled: number;
  toolImages: number;
  images: number;
}> {
  const adapter = ADAPTERS[eviction];
  const { carriers, uploads } = adapter.inventory(messages);
  const tools: ImageRef[] = carriers.flatMap((carrier) => carrier.images);
  const total = tools.length + uploads.length;
  const many = total > rules.images.manyImages;
  // A fit is never larger than the model takes: its longest edge, less when the request is "many".
  const edgeCap = Math.min(
    settings.maxLongEdge,
    rules.images.maxEdge,
    many ? rules.images.maxEdgeWhenMany : Number.POSITIVE_INFINITY,
  );
  // Which images to fit is read from their headers first, without any I/O.
  const wanted: { image: ImageRef; data: string }[] = [];
  // Anthropic refuses an image whose bytes are not the media_type declared ("does not match").
  const mislabeled: { image: ImageRef; data: string; mediaType: string }[] = [];
  // Uploads over the budget that go as they are unless the request is over the model's total.
  const spare: { image: ImageRef; data: string }[] = [];
  const consider = (image: ImageRef, isTool: boolean) => {
    if (image.bytes === 0) return; // a URL or file reference: nothing inline to fit
    const data = adapter.imageData(messages, image);
    if (data === null) return;
    if (eviction === "anthropic") {
      const block = blockAt(messages, image);
      const actual = imageMediaType(data);
      if (actual && asRecord(block?.source)?.media_type !== actual) mislabeled.push({ image, data, mediaType: actual });
      // The caller asked the provider to refuse this image rather than scale it (its coordinates
      // must stay the image's own): it is never fitted here either.
      if (asRecord(block?.transformations)?.oversized_image === "error") return;
    }
    const payload = base64Length(data);
    const urlLength = eviction === "openai" ? data.length : dataUrlOf(messages, image, data);
    const size = imageSize(data);
    const edge = size ? Math.max(size.width, size.height) : 0;
    const overBudget = urlLength > settings.embedTargetBytes || edge > settings.maxLongEdge;
    const refused =
      payload > rules.images.maxImageBytes ||
      edge > rules.images.maxEdge ||
      (many && edge > rules.images.maxEdgeWhenMany);
    if (isTool ? overBudget || refused : refused || (settings.fitUserImages && overBudget))
      wanted.push({ image, data });
    else if (urlLength > settings.embedTargetBytes) spare.push({ image, data });
  };
  for (const image of tools) consider(image, true);
  // A computer-use screenshot is a tool's image, though never retired (the eviction counts it as an upload).
  for (const image of uploads) consider(image, asRecord(messages[image.message])?.role === COMPUTER_SCREENSHOT_ROLE);
  wanted.push(...overTotal(wanted, spare, settings, rules.images.maxRequestBytes));
  if (wanted.length === 0 && mislabeled.length === 0)
    return { messages, fitted: 0, firstFits: 0, skipped: 0, relabeled: 0, toolImages: tools.length, images: total };
  // At most MAX_FITS a request: the uploads (listed last) and the newest tool images; the oldest
  // are the first a retirement drops. The rest go as they came, counted as skipped.
  const dropped = Math.max(0, wanted.length - MAX_FITS);
  wanted.splice(0, dropped);

  // Hashed one at a time (each hash encodes its image's bytes: 100 screenshots at once would hold
  // them all), then every stored fit looked up at once (one round trip of latency, not one per
  // image); the misses are fitted one at a time, so a request never holds two decodes at once
  // (128 MB isolates), and an image sent twice in one request is fitted once.
  const shape = { ...settings, maxLongEdge: edgeCap };
  const keys: string[] = [];
  for (const { data } of wanted) keys.push(await fitKey(data, shape));
  const stored = await Promise.all(keys.map((key) => storedFit(key, ports)));
  const fits = new Map<string, FittedImage | null>();
  let out = messages;
  let fitted = 0;
  let firstFits = 0;
  let skipped = dropped;
  const replaced = new Set<ImageRef>();
  for (const [i, { image, data }] of wanted.entries()) {
    const key = keys[i]!;
    let result = stored[i] !== undefined ? stored[i] : fits.get(key); // null: a refusal, kept
    let first = false;
    if (result === undefined) {
      result = await fitAndKeep(key, data, shape, ports);
      fits.set(key, result);
      first = true;
    }
    if (result === null) {
      skipped += 1;
      continue;
    }
    // The fitter passed it through as it was: nothing to replace, nothing fitted.
    if (result.data === data.slice(data.length - base64Length(data))) continue;
    out = replaceImage(out, image, eviction, result);
    replaced.add(image);
    fitted += 1;
    if (first) firstFits += 1;
  }
  // A mislabeled image left as it is goes out declared as what its bytes are (no re-encode).
  let relabeled = 0;
  for (const { image, data, mediaType } of mislabeled) {
    if (replaced.has(image)) continue; // a fit declares its own type
    out = replaceImage(out, image, eviction, { mediaType, data });
    relabeled += 1;
  }
  return { messages: out, fitted, firstFits, skipped, relabeled, toolImages: tools.length, images: total };
}

/**
 * The spare uploads to fit, oldest first, until the request, with every wanted fit at the budget,
 * is estimated under `maxRequestBytes` (the provider refuses a request over it whole). Oldest
 * first: as a session grows the set only grows, so an upload fitted once stays fitted and the
 * cached prefix stays the same bytes.
 */
function overTotal<T extends { data: string }>(
  wanted: readonly T[],
  spare: readonly T[],
  settings: TransformSettings,
  maxRequestBytes: number,
): T[] {
  if (settings.requestBytes === undefined || settings.requestBytes <= maxRequestBytes) return [];
  const saving = ({ data }: T) => Math.max(0, data.length - settings.embedTargetBytes);
  let estimate = settings.requestBytes - wanted.reduce((sum, image) => sum + saving(image), 0);
  const more: T[] = [];
  for (const image of spare) {
    if (estimate <= maxRequestBytes) break;
    more.push(image);
    estimate -= saving(image);
  }
  return more;
}

/** Base64 characters of inline image data (a data: URL's payload only). */
function base64Length(data: string): number {
  return data.length - Math.max(0, base64Start(data));
}

/** Length of the data: URL an Anthropic base64 image amounts to. */
function dataUrlOf(messages: readonly unknown[], image: ImageRef, data: string): number {
  const source = asRecord(blockAt(messages, image)?.source);
  const mediaType = typeof source?.media_type === "string" ? source.media_type : "";
  return dataUrlPrefixLength(mediaType) + data.length;
}

function blockAt(messages: readonly unknown[], image: ImageRef): Record<string, unknown> | null {
  const content = asRecord(messages[image.message])?.content;
  if (!Array.isArray(content)) return null;
  const block = asRecord(content[image.block]);
  if (image.part === undefined) return block;
  const parts = block?.content;
  return Array.isArray(parts) ? asRecord(parts[image.part]) : null;
}

/** The fitted copy of one image (cached by its hash and the settings), or null when the fitter refuses it. */
/** The cache key of an image's fit: its bytes and the settings that shape the result. */
async function fitKey(data: string, settings: TransformSettings): Promise<string> {
  return `proxy:v1:fit:${await sha256Hex(`${settings.embedTargetBytes}:${settings.maxLongEdge}:${settings.maxInputPixels}:${data}`)}`;
}

/**
 * A stored fit, null for a stored refusal, or undefined (none, expired, malformed, or a store that
 * cannot answer).
 */
async function storedFit(key: string, ports: Ports): Promise<FittedImage | null | undefined> {
  try {
    const hit = await ports.cache.get<FittedImage | RefusedImage>(key);
    if (!hit || hit.expiresAt <= ports.clock()) return undefined;
    const value = hit.value as Partial<FittedImage & RefusedImage> | null;
    if (value?.refused === true) return null;
    if (typeof value?.data === "string" && typeof value.mediaType === "string")
      return { mediaType: value.mediaType, data: value.data };
  } catch {
    // A store that cannot answer costs one fit, never the request.
  }
  return undefined;
}

/** Fits one image and stores the fit; null when the fitter refuses it (it is then sent as it came). */
async function fitAndKeep(
  key: string,
  data: string,
  settings: TransformSettings,
  ports: Ports,
): Promise<FittedImage | null> {
  let fitted: FittedImage;
  try {
    const bytes = decodeImageData(data).bytes;
    const result = await ports.fitImage(bytes, {
      embedTargetBytes: settings.embedTargetBytes,
      maxLongEdge: settings.maxLongEdge,
      maxInputPixels: settings.maxInputPixels,
    });
    fitted = { mediaType: result.mediaType, data: toBase64(result.data) };
  } catch (error) {
    // Corrupt, a bomb, a format the fitter does not read: sent as it came (fit_skipped). A refusal
    // of the image itself (a 4xx) is kept too, so later requests do not decode it again.
    if (error instanceof AppError && error.status < 500) await keep(key, { refused: true }, ports);
    return null;
  }
  await keep(key, fitted, ports);
  return fitted;
}

/** Keeps what became of an image for FIT_TTL_MS; a store that fails costs a fit on the next request. */
async function keep(key: string, value: FittedImage | RefusedImage, ports: Ports): Promise<void> {
  try {
    await ports.cache.put(key, { value, expiresAt: ports.clock() + FIT_TTL_MS }, FIT_TTL_MS);
  } catch {
    // Not kept: the next request fits it again, with the same bytes.
  }
}

/** A copy of `messages` with one image replaced by `fitted` (only the touched message is copied). */
function replaceImage(
  messages: readonly unknown[],
  image: ImageRef,
  eviction: "anthropic" | "openai",
  fitted: FittedImage,
): unknown[] {
  const out = messages.slice();
  const message = asRecord(messages[image.message])!;
  const content = (message.content as unknown[]).slice();
  const swap = (block: Record<string, unknown>): Record<string, unknown> => {
    if (eviction === "anthropic")
      return { ...block, source: { type: "base64", media_type: fitted.mediaType, data: fitted.data } };
    const url = dataUrl(fitted.mediaType, fitted.data);
    const field = block.image_url;
    return {
      ...block,
      image_url: typeof field === "string" || field === undefined ? url : { ...asRecord(field), url },
    };
  };
  if (image.part === undefined) content[image.block] = swap(asRecord(content[image.block])!);
  else {
    const holder = asRecord(content[image.block])!;
    const parts = (holder.content as unknown[]).slice();
    parts[image.part] = swap(asRecord(parts[image.part])!);
    content[image.block] = { ...holder, content: parts };
  }
  out[image.message] = { ...message, content };
  return out;
}
