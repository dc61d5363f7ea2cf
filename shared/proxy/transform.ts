/**
 * The outbound transform of a proxied conversation (docs/proxy.md): fit images the provider should
 * not get as they are, retire old tool images through the eviction module (the same decision code
 * as `POST /v1/context/evict`), and, on Anthropic, re-plan the message breakpoints so one stands at
 * the retirement front. Deterministic: the same body and session memory give the same bytes out.
 */
import {
  evictRemembering,
  outboundEviction,
  readSessionRecord,
  type SessionMemory,
  type SessionRecord,
  writeSessionRecord,
} from "../eviction/evict.service";
import { imageSize } from "../llm/estimate";
import type { WireFormat } from "../llm/format";
import { asRecord, COMPUTER_SCREENSHOT_ROLE, type ImageRef } from "../llm/image-blocks";
import type { LlmProviderSpec } from "../llm/llm-provider.types";
import { modelRules, type ModelRules, type PriceOverrides } from "../llm/models.table";
import { toolResultCandidates } from "../eviction/tool-results";
import { retiredToolResultText } from "../llm/tool-result-blocks";
import type { AppPorts } from "../ports";
import { base64Start } from "../media/data-url";
import { type FitOutcome, fitAndKeep, knownFits } from "./fit-memo";
import { isShadowState, type ShadowEstimate, shadowStep } from "./shadow";

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
  /** The request's store writes (new fits, the session's record): awaited beside the provider call. */
  readonly writes: Promise<void>;
  /**
   * The fits' base64 the body carries (fit-memo.ts: made by the fitter, or read from the store and
   * checked to be base64), which JSON writes as it is: encodeJson need not check them.
   */
  readonly plain: readonly string[];
}

type Ports = Pick<AppPorts, "cache" | "clock" | "fitImage">;

/**
 * Most images fitted in one request: each is a decode and an encode (up to a few hundred ms of CPU
 * for a large screenshot) and two cache-store operations (Workers KV allows 1,000 a request).
 */
export const MAX_FITS = 100;

/**
 * Transforms a parsed request body of a proxied path.
 * @param sessionKey the session memory's key (X-Session-Id or derived), already hashed
 * @param recordRead the session's record, when its read was started before the body was parsed
 *   (proxy.service.ts, `readAhead`); otherwise it is read here, once the body is known to need it
 */
export async function transformConversation(
  body: Record<string, unknown>,
  spec: LlmProviderSpec,
  format: WireFormat,
  sessionKey: string,
  settings: TransformSettings,
  ports: Ports,
  recordRead?: Promise<SessionRecord>,
): Promise<TransformOutcome> {
  const original = format.messagesOf(body);
  const writes: Promise<void>[] = [];
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
    writes: Promise.resolve(),
    plain: [],
  };
  if (!original || original.length === 0) return unchanged;
  const model = typeof body.model === "string" ? body.model : undefined;
  const rules = modelRules(spec.name, model, settings.priceOverrides);

  // The session's record is read beside the fits' lookups, once the request is known to carry an image.
  let reading: Promise<SessionRecord> | null = recordRead ?? null;
  const readRecord = () => (reading ??= readSessionRecord(sessionKey, ports));
  const fit = await fitImages(original, format, rules, settings, ports, { readRecord, writes });
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
      ? toolResultCandidates(format.toolResults(original, body), settings.toolResultMinChars ?? 8_192)
      : [];
  const record = fit.images > 0 || texts.length > 0 ? await readRecord() : null;
  let remember: SessionMemory | null = record?.memory ?? null;
  let retiredNow = 0;
  let toolResults = NO_TOOL_RESULTS;
  if (settings.strategy !== "off" && (hasToolImages || texts.length > 0)) {
    // cost: the eviction module's entry for the proxy (the route's own decision code), which may
    // move the caller's oldest message breakpoint to the front; hermes: the route's batched 20/8/3.
    const { evict, planning } = outboundEviction({
      format: format.layout,
      messages,
      ...(model === undefined ? {} : { model: model.slice(0, 200) }),
      sessionKey,
      ...format.prefixOf(body),
      movesClientBreakpoint: true,
      ...(settings.priceOverrides === undefined ? {} : { priceOverrides: settings.priceOverrides }),
    });
    const withTexts = texts.length > 0 ? { ...planning, toolResults: texts } : planning;
    const out =
      settings.strategy === "cost"
        ? evictRemembering(evict, record?.memory ?? null, ports.clock(), withTexts)
        : evictRemembering(
            { format: format.layout, messages: messages as Record<string, unknown>[], strategy: "hermes" },
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
      writes.push(
        writeSessionRecord(
          sessionKey,
          { memory: remember, extra: { ...record.extra, shadow: step?.state ?? null } },
          ports,
        ),
      );
  }
  const written = Promise.all(writes).then(() => undefined);
  if (!changed) return { ...unchanged, fitSkipped: fit.skipped, rule, estimate, writes: written };
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
    writes: written,
    plain: fit.plain,
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
  format: WireFormat,
  rules: ModelRules,
  settings: TransformSettings,
  ports: Ports,
  store: { readRecord: () => unknown; writes: Promise<void>[] },
): Promise<{
  messages: unknown[];
  fitted: number;
  firstFits: number;
  skipped: number;
  relabeled: number;
  toolImages: number;
  images: number;
  plain: readonly string[];
}> {
  const { carriers, uploads } = format.inventory(messages);
  const tools: ImageRef[] = carriers.flatMap((carrier) => carrier.images);
  const total = tools.length + uploads.length;
  if (total > 0) store.readRecord();
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
    const data = format.imageData(messages, image);
    if (data === null) return;
    const facts = format.inlineImage(messages, image, data);
    if (facts.mislabeledAs !== null) mislabeled.push({ image, data, mediaType: facts.mislabeledAs });
    if (facts.keepsOwnSize) return;
    const payload = base64Length(data);
    const urlLength = facts.dataUrlLength;
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
    return {
      messages,
      fitted: 0,
      firstFits: 0,
      skipped: 0,
      relabeled: 0,
      toolImages: tools.length,
      images: total,
      plain: [],
    };
  // At most MAX_FITS a request: the uploads (listed last) and the newest tool images; the oldest
  // are the first a retirement drops. The rest go as they came, counted as skipped.
  const dropped = Math.max(0, wanted.length - MAX_FITS);
  wanted.splice(0, dropped);

  // Known fits from the isolate's memory, else the store (fit-memo.ts); the misses are fitted one
  // at a time, so a request never holds two decodes at once (128 MB isolates), and an image sent
  // twice in one request is fitted once.
  const shape = { ...settings, maxLongEdge: edgeCap };
  const { keys, known: stored } = await knownFits(
    wanted.map(({ data }) => data),
    shape,
    ports,
  );
  const fits = new Map<string, FitOutcome>();
  let out = messages;
  let fitted = 0;
  let firstFits = 0;
  let skipped = dropped;
  const replaced = new Set<ImageRef>();
  const plain: string[] = [];
  for (const [i, { image, data }] of wanted.entries()) {
    const key = keys[i]!;
    let result = stored[i] !== undefined ? stored[i] : fits.get(key); // null: a refusal, kept
    let first = false;
    if (result === undefined) {
      result = await fitAndKeep(key, data, shape, ports, store.writes);
      fits.set(key, result);
      first = true;
    }
    if (result === null) {
      skipped += 1;
      continue;
    }
    // The fitter passed it through as it was: nothing to replace, nothing fitted.
    if (result.data === data.slice(data.length - base64Length(data))) continue;
    out = format.replaceImage(out, image, result);
    plain.push(result.data);
    replaced.add(image);
    fitted += 1;
    if (first) firstFits += 1;
  }
  // A mislabeled image left as it is goes out declared as what its bytes are (no re-encode).
  let relabeled = 0;
  for (const { image, data, mediaType } of mislabeled) {
    if (replaced.has(image)) continue; // a fit declares its own type
    out = format.replaceImage(out, image, { mediaType, data });
    relabeled += 1;
  }
  return { messages: out, fitted, firstFits, skipped, relabeled, toolImages: tools.length, images: total, plain };
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
