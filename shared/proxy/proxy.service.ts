/**
 * The provider proxy (docs/proxy.md): `/<provider>/<the provider's own path>` forwarded to the
 * configured upstream only, with the outbound transform on the conversation paths, the answer
 * relayed as it streams, and what happened counted in the savings ledger. Every failure a caller
 * sees is in its provider's error shape, because the caller's SDK parses that shape.
 */
import type { LoadedConfig } from "../config/config.load";
import {
  BODY_LIMITS,
  decodeUtf8Body,
  encodeJson,
  isJsonContentType,
  MiB,
  parseJsonText,
  readBodyBytes,
} from "../http/body";
import { AppError } from "../http/errors";
import { takesAnonymousCalls } from "../http/auth";
import { anonymousOriginRefusal } from "../safety/origin";
import { loggedPath } from "../safety/secrets";
import { asRecord } from "../llm/image-blocks";
import { concatBytes, readAtMost } from "../bytes";
import { Deadline } from "../deadline";
import { sha256Hex } from "../hash";
import type { AppPorts } from "../ports";
import { TextSet } from "../text-map";
import { apiTokens } from "../http/auth";
import { carriesServiceToken, PREFLIGHT, upstreamCredential } from "./credentials";
import type { LlmProviderSpec, LlmUsage, ProxiedPath, StreamUsage } from "../llm/llm-provider.types";
import { keyRedactor } from "./redact";
import { learnedImageCosts, type SentShape, sentShape } from "../eviction/image-cost";
import { type ModelPrices, type ModelRules, modelRules, promptTokens } from "../llm/models.table";
import { usageCounters } from "../stats/counters";
import { relayAnswer } from "./relay";
import { sessionName } from "../stats/ledger";
import { asSentUsage, estimatedSavingUsd } from "./shadow";
import {
  checkOperatorPath,
  conversationOf,
  headerForwarder,
  PROXY_METHODS,
  providerPath,
  SESSION_HEADER,
} from "./request-policy";
import { transformConversation, type TransformOutcome } from "./transform";
import { readSessionRecord, type SessionRecord } from "../eviction/evict.service";
import { retiresToolResults } from "./tool-results.option";
import { fitMemory } from "./fit-memo";

/** The headers a CORS preflight is forwarded with: the ones that say what the page asks. */
const PREFLIGHT_HEADERS = new Set(["origin", "access-control-request-method", "access-control-request-headers"]);

/** Bodies over this are dropped as bytes once decoded (see proxyRequest); smaller ones are kept and sent as they came. */
const RE_ENCODE_FROM_BYTES = 1 * MiB;

const startsWithBom = (bytes: Uint8Array) => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

export interface ProxyRun {
  ports: AppPorts;
  loaded: LoadedConfig;
  requestId: string;
}

/** What one proxied request did, for the X-Edge headers and the ledger. */
interface Done {
  readonly transform: TransformOutcome | null;
  readonly bytesSaved: number;
  readonly sessionKey: string | null;
  /** What was sent, for a model whose image cost is learned from its bills (null: not learned). */
  readonly sent: SentShape | null;
}

const NOTHING_DONE: Done = { transform: null, bytesSaved: 0, sessionKey: null, sent: null };

/** The body to send and what was done to it. */
interface Outbound {
  readonly body: Uint8Array | ReadableStream<Uint8Array> | undefined;
  readonly done: Done;
  /** How to take out of the stream the usage the proxy asked for (null: the caller asked, or nothing was asked). */
  readonly unasked: StreamUsage["unasked"] | null;
}

/** The ledger entries of one request: under its provider, session and (once the body is read) its model. */
class RequestLedger {
  model: string | undefined;
  /** The session the ledger counts the request under (docs/stats.md "Sessions"), once its body is read. */
  session: { session: string } | Record<string, never> = {};

  constructor(
    private readonly run: ProxyRun,
    private readonly spec: LlmProviderSpec,
  ) {}

  record(counts: Readonly<Record<string, number>>, unconfirmed: boolean, at: number): void {
    this.run.ports.ledger.record({
      tool: "llm",
      provider: this.spec.name,
      ...(this.model === undefined ? {} : { model: this.model }),
      ...this.session,
      unconfirmed,
      counts,
      at,
    });
  }
}

/**
 * Answers one request under `/<spec.name>/`.
 * @example app.all("/anthropic/*", (c) => proxyRequest(c.req.raw, ANTHROPIC, run))
 */
export async function proxyRequest(request: Request, spec: LlmProviderSpec, run: ProxyRun): Promise<Response> {
  const { config } = run.loaded;
  const url = new URL(request.url);
  let path = url.pathname;
  if (!config.proxy.enabled)
    return providerError(
      spec,
      new AppError(404, "not_found", `The provider proxy is turned off on this service (proxy.enabled = false).`),
    );
  let proxied: ProxiedPath | undefined;
  // A browser's CORS preflight: no key, no body, nothing but what the preflight asks.
  const preflight =
    request.method === "OPTIONS" &&
    request.headers.has("origin") &&
    request.headers.has("access-control-request-method");
  const ledger = new RequestLedger(run, spec);
  try {
    if (!PROXY_METHODS.includes(request.method))
      throw new AppError(
        405,
        "method_not_allowed",
        `The ${spec.name} API is called with ${PROXY_METHODS.join(", ")}; ${request.method.slice(0, 20)} is not forwarded.`,
      );
    path = providerPath(spec, path);
    proxied = conversationOf(spec, request.method, path);
    const retireToolResults = proxied ? retiresToolResults(request.headers, config.proxy.retire_tool_results) : false;
    const foreign = anonymousOriginRefusal(request, config.security.allowed_origins, takesAnonymousCalls(run.loaded));
    if (foreign) throw foreign;
    const credential = preflight ? PREFLIGHT : await upstreamCredential(spec, request.headers, run.loaded);
    if (credential.operatorKey) checkOperatorPath(spec, request.method, path, config.proxy.allowed_paths);
    const target = upstreamUrl(baseUrlOf(spec, run.loaded), path, url.search);
    const headers = outboundHeaders(request, preflight, run.loaded);
    credential.apply(headers);

    let body: Uint8Array | ReadableStream<Uint8Array> | undefined;
    // A conversation is read whole (64 MiB at most) to be transformed; any other path (a file
    // upload, a message batch: the providers take hundreds of MB) streams through unread.
    if (request.method !== "GET" && !preflight)
      body = proxied ? await readBodyBytes(request, BODY_LIMITS.proxy) : (request.body ?? undefined);
    // A conversation read was inflated (readBodyBytes): it goes on as the bytes it became.
    if (proxied) headers.delete("content-encoding");
    let outbound: Outbound;
    if (proxied && body instanceof Uint8Array && isJsonContentType(request.headers.get("content-type"))) {
      const read = { bytes: body as Uint8Array | null };
      body = undefined; // held by `read` alone, which drops it once decoded
      outbound = await transformedBody(
        read,
        request,
        spec,
        { proxied, retireToolResults },
        credential.callerHash,
        run,
        ledger,
      );
    } else outbound = { body, done: NOTHING_DONE, unasked: null };
    return await answer(run, spec, { method: request.method, headers, target, proxied }, outbound, credential, ledger);
  } catch (error) {
    if (!(error instanceof AppError)) {
      run.ports.log.error("proxy_failed", {
        request_id: run.requestId,
        provider: spec.name,
        path: loggedPath(path),
        cause: String(error).slice(0, 200),
      });
      return providerError(
        spec,
        new AppError(
          500,
          "internal_error",
          "The service failed unexpectedly; try again, and report the request id if it persists.",
        ),
      );
    }
    if (proxied?.counted && (error.code === "provider_error" || error.code === "provider_timeout")) {
      ledger.record({ requests: 1, errors: 1 }, true, run.ports.clock());
    }
    return providerError(spec, error);
  }
}

/**
 * The headers sent upstream, by allow-list: what the runtime hides from the Worker (a header
 * `Connection` names, on workerd) cannot pass by being unseen, and no header carries the
 * service's own token. The credential is applied by the caller.
 */
function outboundHeaders(request: Request, preflight: boolean, loaded: LoadedConfig): Headers {
  const headers = new Headers();
  const forwards = preflight
    ? (name: string) => PREFLIGHT_HEADERS.has(name)
    : headerForwarder(loaded.config.proxy.forward_headers);
  const tokens = apiTokens(loaded.secrets.API_TOKENS);
  request.headers.forEach((value, name) => {
    if (forwards(name) && !carriesServiceToken(value, tokens)) headers.set(name, value);
  });
  return headers;
}

/** A conversation's JSON body through the outbound transform: the bytes to send and what was done. */
async function transformedBody(
  read: { bytes: Uint8Array | null },
  request: Request,
  spec: LlmProviderSpec,
  { proxied, retireToolResults }: { proxied: ProxiedPath; retireToolResults: boolean },
  callerHash: string,
  run: ProxyRun,
  ledger: RequestLedger,
): Promise<Outbound> {
  const { config } = run.loaded;
  const text = decodeUtf8Body(read.bytes!);
  const received = read.bytes!.byteLength;
  const ahead = readAhead(spec, request.headers, callerHash, text, run);
  // A large body is not held as bytes, text and parsed value at once: unchanged, it is sent as
  // its text encoded again, which gives back exactly its bytes (strict UTF-8 both ways), unless
  // a byte-order mark led them (the text has dropped it).
  let exact = received > RE_ENCODE_FROM_BYTES && !startsWithBom(read.bytes!) ? null : read.bytes;
  read.bytes = null;
  // The strings the parse left as slices of the text need no escape: encodeJson does not check them again.
  const plain = new TextSet();
  // An image this isolate remembers was checked for control characters when it was first seen; the
  // value holds the memory's own copy of it, which the transform's lookup finds by identity.
  const parsed = parseJsonText(text, undefined, plain, (contents) => fitMemory.plainCopy(contents));
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    throw new AppError(400, "invalid_request", "The request body must be a JSON object.");
  const object = parsed as Record<string, unknown>;
  const model = typeof object.model === "string" ? object.model : undefined;
  ledger.model = model;
  const sessionKey = await (ahead?.sessionKey ?? sessionKeyOf(spec, proxied, request.headers, callerHash, object));
  ledger.session = { session: sessionName(request.headers.get(SESSION_HEADER), edgeSession(sessionKey)) };
  const transform = await transformConversation(
    object,
    spec,
    proxied.format,
    sessionKey,
    {
      embedTargetBytes: config.vision.embed_target_bytes,
      maxLongEdge: config.vision.max_long_edge,
      maxInputPixels: config.vision.max_input_pixels,
      fitUserImages: config.proxy.fit_user_images,
      strategy: config.proxy.strategy,
      priceOverrides: config.pricing.models,
      // A request the ledger does not count (count_tokens) never reaches the provider's cache.
      remembers: proxied.counted,
      requestBytes: received,
      retireToolResults,
      toolResultMinChars: config.proxy.tool_result_min_chars,
    },
    run.ports,
    ahead?.record,
  );
  for (const data of transform.plain) plain.add(data);
  // A stream that reports usage only when asked is sent asking (the bill is the bill).
  const asking = proxied.counted ? (proxied.streamUsage?.ask(transform.body) ?? null) : null;
  const sent =
    transform.changed || asking
      ? encodeJson(asking ?? transform.body, undefined, plain)
      : (exact ?? new TextEncoder().encode(text));
  exact = null;
  // A model the table does not know has its image cost learned from its bills (docs/eviction.md).
  const learns = proxied.counted && !modelRules(spec.name, model).known && model !== undefined;
  const sentBody = transform.body;
  return {
    body: sent,
    unasked: asking ? proxied.streamUsage!.unasked : null,
    done: {
      transform,
      bytesSaved: Math.max(0, received - sent.byteLength),
      sessionKey,
      sent: learns
        ? sentShape(proxied.format, proxied.format.messagesOf(sentBody) ?? [], [
            sentBody.system,
            sentBody.tools,
            sentBody.instructions,
          ])
        : null,
    },
  };
}

/**
 * The provider's answer, relayed: sent while the transform's store writes finish, the operator's
 * key taken out, the request counted in the ledger, its usage counted as the answer ends.
 */
async function answer(
  run: ProxyRun,
  spec: LlmProviderSpec,
  call: { method: string; headers: Headers; target: string; proxied: ProxiedPath | undefined },
  outbound: Outbound,
  credential: { operatorKey?: string | null | undefined },
  ledger: RequestLedger,
): Promise<Response> {
  const { config } = run.loaded;
  const { done } = outbound;
  // The store writes (fits, the session's record) run beside the provider call; the answer waits
  // for them, so the session's next request finds them.
  const [answered] = await Promise.all([
    forward(
      run,
      spec,
      call.target,
      { method: call.method, headers: call.headers, body: outbound.body },
      config.proxy.timeout_seconds,
    ),
    done.transform?.writes,
  ]);
  const upstream = credential.operatorKey
    ? await withoutKey(answered, spec, credential.operatorKey, config.proxy.timeout_seconds)
    : answered;
  const counted = call.proxied?.counted === true;
  const at = run.ports.clock();
  // A refused request's model is the caller's string, which no answer confirmed (docs/stats.md).
  const refused = upstream.status >= 400;
  if (counted) {
    ledger.record(
      {
        requests: 1,
        errors: refused ? 1 : 0,
        images_fitted: done.transform?.firstFits ?? 0,
        image_blocks_fitted: done.transform?.fitted ?? 0,
        images_retired: done.transform?.retiredNow ?? 0,
        tool_results_retired: done.transform?.toolResults.retiredNow ?? 0,
        tool_result_chars_saved: done.transform?.toolResults.charsSaved ?? 0,
        fit_skipped: done.transform?.fitSkipped ?? 0,
        bytes_saved: done.bytesSaved,
      },
      refused,
      at,
    );
  }
  const model = ledger.model;
  const record = (usage: LlmUsage | null, failed: boolean) => {
    if (usage !== null && !failed && !refused && done.sent !== null && done.sessionKey !== null && model !== undefined)
      learnedImageCosts.observe(model, done.sessionKey, done.sent, promptTokens(usage));
    // A stream that failed after its 200 is an error too (a status of 400 or more was counted above).
    // Each kind under the request's price tier, which only the billed prompt tells (docs/stats.md);
    // what the agent's own request would have been billed, under its own tier.
    const rules = modelRules(spec.name, model, config.pricing.models);
    const counts: Record<string, number> =
      usage === null ? {} : { ...usageCounters(usage, rules), ...asSentCounts(usage, done.transform, rules) };
    if (failed && !refused) counts.errors = 1;
    if (Object.keys(counts).length === 0) return;
    ledger.record(counts, refused, at);
  };
  const prices = modelRules(spec.name, model, config.pricing.models).prices;
  return relayAnswer(
    upstream,
    spec,
    edgeHeaders(done, prices),
    counted ? record : null,
    upstream.ok ? outbound.unasked : null,
  );
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** Most bytes of a provider's error answer read to take the operator's key out of it (they are a few hundred). */
const MAX_ERROR_BYTES = 64 * 1024;
/** A key as a provider's error echoes it, masked: key characters around a run of asterisks (OpenAI's `sk-proj-****…abcd`). */
const MASKED_KEY = /[\w-]*\*{3,}[\w-]*/g;

/**
 * The answer without the operator's key (docs/proxy.md, "Credentials"): its headers and its body,
 * whatever the status, scrubbed of the key and its masked forms (redact.ts), a body as it streams.
 * An error answer (400 and up) is read whole first, up to 64 KiB, and any masked key in it is
 * taken out too: OpenAI's 401 names the key it refused ("Incorrect API key provided:
 * sk-proj-****abcd"), and with the operator's key that is the operator's. An error body that is
 * too large, cut off, or not finished within `timeoutSeconds` is not relayed: the caller gets the
 * provider's status and a message saying so.
 */
async function withoutKey(
  upstream: Response,
  spec: LlmProviderSpec,
  key: string,
  timeoutSeconds: number,
): Promise<Response> {
  const redactor = keyRedactor(key);
  const headers = new Headers();
  for (const [name, value] of upstream.headers) headers.append(name, redactor.text(value));
  const body = upstream.body;
  const init = { status: upstream.status, statusText: upstream.statusText, headers };
  // A status that has no body (204, 205, 304) keeps none: a Response refuses one there.
  if (body === null || NULL_BODY_STATUSES.has(upstream.status)) return new Response(null, init);
  if (upstream.status < 400) return new Response(body.pipeThrough(redactor.stream()), init);
  const over = new Error("over");
  const deadline = new Deadline(timeoutSeconds * 1000);
  let bytes: Uint8Array;
  try {
    bytes = await readAtMost(
      body,
      MAX_ERROR_BYTES,
      () => over,
      (read) => deadline.within(read),
    );
  } catch (error) {
    await body.cancel().catch(() => undefined);
    const what =
      error === over
        ? `with an error over ${MAX_ERROR_BYTES / 1024} KiB, not relayed`
        : `with an error body that did not arrive whole within ${timeoutSeconds} s`;
    return providerError(
      spec,
      new AppError(upstream.status, "provider_error", `The ${spec.name} API answered ${upstream.status} ${what}.`),
    );
  } finally {
    deadline.clear();
  }
  const scrubber = redactor.body();
  const scrubbed = concatBytes([scrubber.push(bytes), scrubber.end()]);
  const text = new TextDecoder().decode(scrubbed);
  const cleaned = text.replace(MASKED_KEY, "[redacted]");
  return new Response((cleaned === text ? scrubbed : cleaned) as BodyInit, init);
}

/**
 * The tokens the request would have been billed as the agent sent it (docs/stats.md, "The
 * service's own saving"): the bill itself for a request the proxy did not change, else the bill
 * calibrated through the session's shadow; each kind under the as-sent prompt's own price tier
 * (output as billed, priced at that tier).
 */
function asSentCounts(
  usage: LlmUsage,
  transform: TransformOutcome | null,
  rules: Pick<ModelRules, "tiers">,
): Record<string, number> {
  const asSent = transform?.changed && transform.estimate ? asSentUsage(usage, transform.estimate) : usage;
  return usageCounters({ ...asSent, output: usage.output }, rules, "as_sent_");
}

function edgeHeaders(done: Done, prices: ModelPrices): Record<string, string> {
  const transform = done.transform;
  // Sent before the answer's usage is known: the shadow's estimate, in estimated tokens (the ledger's
  // figure is the same difference calibrated on the bill when the answer ends).
  const saved = transform?.changed && transform.estimate ? estimatedSavingUsd(transform.estimate, prices) : 0;
  const headers: Record<string, string> = {
    "x-edge-retired": String(transform?.retired ?? 0),
    "x-edge-retired-tool-results": String(transform?.toolResults.retired ?? 0),
    "x-edge-fitted": String(transform?.fitted ?? 0),
    "x-edge-bytes-saved": String(done.bytesSaved),
    "x-edge-saved-usd": (Object.is(Math.round(saved * 1e6), -0) ? 0 : saved).toFixed(6),
  };
  if (done.sessionKey !== null) headers["x-edge-session"] = edgeSession(done.sessionKey);
  return headers;
}

/** The `X-Edge-Session` a session key is answered as. */
const edgeSession = (sessionKey: string): string => sessionKey.slice(0, 32);

function baseUrlOf(spec: LlmProviderSpec, loaded: LoadedConfig): string {
  const providers = loaded.config.providers as Record<string, string | null>;
  return providers[`${spec.name}_base_url`] ?? spec.defaultBaseUrl;
}

/**
 * The upstream URL: the configured base, the provider's path (checked by `providerPath`), the
 * query. Built by concatenation (never URL resolution) and checked to stay on the configured
 * origin and under the configured base path (an AI gateway's `/v1/<account>/anthropic`), so no
 * path (`//host`, `/..`, `@host`, an encoded slash) can reach another host or another tenant.
 */
export function upstreamUrl(base: string, path: string, search: string): string {
  const target = `${base}${path.startsWith("/") ? path : `/${path}`}${search}`;
  const parsed = URL.canParse(target) ? new URL(target) : null;
  const home = new URL(base);
  const basePath = home.pathname.replace(/\/+$/, "");
  if (
    !parsed ||
    parsed.origin !== home.origin ||
    !(parsed.pathname === basePath || parsed.pathname.startsWith(`${basePath}/`))
  )
    throw new AppError(400, "invalid_request", "The request path does not name a path of the provider's API.");
  return target;
}

/**
 * The session's record read ahead, beside the body's parse (which takes a 4.7 MB body several ms):
 * when the caller names its session (X-Session-Id, so the key needs no parse) and the body holds
 * inline base64 (an image, whose request reads the record anyway). A text-only request does not
 * read it (docs/proxy.md, "Fitting"); one that only mentions base64 reads it for nothing.
 */
function readAhead(
  spec: LlmProviderSpec,
  headers: Headers,
  callerHash: string,
  text: string,
  run: ProxyRun,
): { sessionKey: Promise<string>; record: Promise<SessionRecord> } | null {
  const given = givenSessionKey(spec, headers, callerHash);
  if (given === null || !text.includes("base64")) return null;
  return { sessionKey: given, record: given.then((key) => readSessionRecord(key, run.ports)) };
}

/** The session key of a caller that names its session (X-Session-Id, at most 256 characters), else null. */
function givenSessionKey(spec: LlmProviderSpec, headers: Headers, callerHash: string): Promise<string> | null {
  const given = headers.get(SESSION_HEADER)?.trim();
  return given && given.length <= 256 ? sha256Hex(`${spec.name}\n${callerHash}\nsession\n${given}`) : null;
}

/**
 * Sessions are kept apart by caller: the key is a hash of the caller's credential hash and either
 * its `X-Session-Id` or, without one, the model, the system prompt and the first message.
 */
async function sessionKeyOf(
  spec: LlmProviderSpec,
  proxied: ProxiedPath,
  headers: Headers,
  callerHash: string,
  body: Record<string, unknown>,
): Promise<string> {
  const given = givenSessionKey(spec, headers, callerHash);
  if (given !== null) return given;
  // The first message is the conversation's own: a Chat or Responses system (developer) message
  // is the agent's, the same in each of its conversations, so it counts with the system prompt.
  const messages = proxied.format.messagesOf(body) ?? [];
  const found = messages.findIndex((message) => !SYSTEM_ROLES.has(String(asRecord(message)?.role)));
  const opening = found < 0 ? messages.length : found;
  const first = messages[opening] ?? null;
  const system = body.system ?? body.instructions ?? (opening > 0 ? messages.slice(0, opening) : null);
  return sha256Hex(
    `${spec.name}\n${callerHash}\nderived\n${String(body.model)}\n${JSON.stringify(system)}\n${JSON.stringify(first)}`,
  );
}

const SYSTEM_ROLES = new Set(["system", "developer"]);

/** The provider call, with a timeout until its answer starts: unreachable is a 502, too slow a 504. */
async function forward(
  run: ProxyRun,
  spec: LlmProviderSpec,
  target: string,
  init: { method: string; headers: Headers; body?: Uint8Array | ReadableStream<Uint8Array> },
  timeoutSeconds: number,
): Promise<Response> {
  const deadline = new Deadline(timeoutSeconds * 1000);
  try {
    return await run.ports.fetch(target, {
      method: init.method,
      headers: init.headers,
      body: init.body as BodyInit | undefined,
      // A stream is sent as it arrives (the fetch standard asks for this flag on a stream body).
      ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
      signal: deadline.signal,
      redirect: "manual",
    } as RequestInit);
  } catch (error) {
    const timedOut = deadline.expired;
    run.ports.log.warn("proxy_upstream_failed", {
      request_id: run.requestId,
      provider: spec.name,
      reason: timedOut ? "timeout" : "unreachable",
    });
    if (timedOut)
      throw new AppError(
        504,
        "provider_timeout",
        `The ${spec.name} API did not answer within ${timeoutSeconds} s; try again.`,
      );
    // The setting's name, not its value: the upstream's address is the operator's, not the caller's.
    const where = `providers.${spec.name}_base_url`;
    throw new AppError(
      502,
      "provider_error",
      `The ${spec.name} API could not be reached at ${where}; check that setting, or try again.`,
      {
        cause: error,
      },
    );
  } finally {
    // The answer has started (or failed): its stream is no longer under the deadline.
    deadline.clear();
  }
}

function providerError(spec: LlmProviderSpec, error: AppError): Response {
  return new Response(JSON.stringify(spec.errorBody(error.status, error.message, error.code)), {
    status: error.status,
    headers: {
      "content-type": "application/json",
      "x-should-retry": error.status >= 500 ? "true" : "false",
      ...(error.status === 405 ? { allow: PROXY_METHODS.join(", ") } : {}),
    },
  });
}
