/**
 * Ports: every interface domain code needs from a runtime, and `AppDeps`, the set of them a runtime
 * entry (workers/deps.ts, deno/main.ts) hands the app. Domain code never touches bindings or
 * globals. This file imports only data types from modules that never import it back (provider and
 * job data, the image header's media type, address classes, the loaded configuration), so no
 * import loop runs through it; test/node/architecture.test.ts checks that the tree has none.
 */
import type { LoadedConfig } from "./config/config.load";
import type { FetchFn } from "./http/fetch.types";
import type { Config, Secrets } from "./config/config.schema";
import type { AddressClass } from "./safety/ip";
import type { SupportedMediaType } from "./media/image-header";
import type { Job, JobValue } from "./web/job.types";
import type { SessionsResponse, StatsResponse, StatsWindow } from "./stats/stats.schema";
import type { LedgerTool } from "./stats/counters";

/** Milliseconds since the epoch. Injected so TTL behaviour is testable. */
export type Clock = () => number;

/** The web-standard fetch signature (a leaf module, so providers can name it without a loop). */
export type { FetchFn } from "./http/fetch.types";

/**
 * Structured logging. One JSON line per event; callers pass only non-secret fields (never a key,
 * a token, an upstream body or a URL that was refused for carrying a secret).
 */
export interface Logger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

/** What a route adds to its request's log line (the provider that answered); app/request-log.ts writes it. */
export interface RequestLogFields {
  provider?: string;
}

/** A stored cache value: the payload, when it was fetched, and the absolute time it stops being valid. */
export interface CacheEntry<T = unknown> {
  value: T;
  /** Epoch ms after which the entry is a miss, whatever the storage still holds. */
  expiresAt: number;
  /**
   * Epoch ms the provider answered (a caller's `max_age` and every answer's `age` are judged by
   * it). Absent in entries stored before it was kept: read as `expiresAt` less the TTL.
   */
  fetchedAt?: number;
}

/** Global read tier (KV on Workers, Deno KV on Deno). TTL quirks live in the adapter. */
export interface CacheStore {
  get<T>(key: string): Promise<CacheEntry<T> | null>;
  /**
   * As `get`, but a memory copy may answer with one parsed entry shared by every reader,
   * deep-frozen: for a reader that only reads it (the web cache's hit), which then skips a parse.
   */
  getShared?<T>(key: string): Promise<Readonly<CacheEntry<T>> | null>;
  /** `ttlMs` is the logical TTL; adapters round up to their storage minimum. */
  put<T>(key: string, entry: CacheEntry<T>, ttlMs: number): Promise<void>;
  /** Drops the entry (a purge); true when there was one. */
  delete(key: string): Promise<boolean>;
  /**
   * Drops this isolate's (or process's) memory copy of `key`, if the store keeps one: the
   * single-flight owner has just stored a newer entry behind the store's back.
   */
  forgetCopy?(key: string): void;
}

export type CacheStatus = "hit" | "miss" | "coalesced" | "bypass";

/** Error as it crosses the single-flight boundary (RPC-safe). */
export interface FlightError {
  status: number;
  code: string;
  message: string;
}

export type FlightOutcome =
  | { ok: true; value: JobValue; cache: Exclude<CacheStatus, "bypass">; stored: boolean; fetchedAt: number }
  | { ok: false; error: FlightError };

export interface FlightOptions {
  /** The caller's clock, so the TTL is judged by one clock end to end. */
  now: number;
  ttlMs: number;
  /**
   * False for values that must never be stored whatever they contain (exempt hosts, a caller's
   * `store: false`): then nothing is read from or written to the cache, and the call merges only
   * with other unstored calls of its key.
   */
  store: boolean;
  /**
   * The caller's `max_age` (ms): a stored entry fetched longer ago than this before `now` is not
   * served (0: never). A call in flight is joined whatever its age limit: its answer is fresh.
   */
  maxAgeMs?: number;
  /**
   * Most content characters the caller can receive (`web.char_limit`). The owner stores the whole
   * page but answers with the content already cut (`truncated: true`), so an answer of any size
   * crosses the owner's RPC boundary (32 MiB on Workers) and is paid once.
   */
  charLimit?: number;
}

/** Single-flight: one paid call per key however many callers ask at once (docs/storage.md). */
export interface SingleFlight {
  run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome>;
  /** Drops the owner's authoritative copy of `key` (a purge); a call in flight still stores. True when there was one. */
  forget(key: string): Promise<boolean>;
  /**
   * How many callers of `key` (stored and unstored calls together) wait right now on a call
   * someone else pays for: read-only, so a test can hold the provider's answer until every
   * concurrent caller has joined.
   */
  joiners(key: string): Promise<number>;
}

export interface ResolvedAddress {
  /** As the resolver wrote it. */
  address: string;
  /** Classified once, when the answer arrives, so a cache hit does no parsing. */
  cls: AddressClass;
}

/** Why the resolver itself could not be used: the name was never judged. */
export type ResolverFault = "timeout" | "unreachable" | "http_error" | "not_doh_json";

export type DnsLookup =
  | { ok: true; addresses: readonly ResolvedAddress[] }
  /** The resolver answered, and the answer does not let the name be verified (NXDOMAIN, SERVFAIL, bad records). */
  | { ok: false; reason: "nxdomain" | "no_address" | "resolver_error" }
  /** The resolver could not be asked (down, filtered, too slow, not a DoH JSON endpoint): `resolver` is its host. */
  | { ok: false; reason: "unavailable"; fault: ResolverFault; resolver: string };

/** Looks a hostname up (A and AAAA). Never throws: a failure is a `{ ok: false }` result. */
export interface DnsResolver {
  lookup(host: string): Promise<DnsLookup>;
}

export type Reservation = { ok: true; count: number } | { ok: false; count: number };

/** The per-session repeat-cap counters of vision; one implementation per runtime. */
export interface EmbedCounter {
  /** Atomically takes a slot for `imageKey` in `sessionId` unless `cap` slots are taken. */
  reserve(sessionId: string, imageKey: string, cap: number | null): Promise<Reservation>;
  /** Gives a slot back after a load that failed. */
  release(sessionId: string, imageKey: string): Promise<void>;
}

/**
 * The compiled WASM modules image fitting runs. Loading a `.wasm` file is the one runtime-specific
 * step (workerd imports it as a compiled module, Node and Deno read bytes), so each runtime entry
 * compiles the modules once and hands them in; fitting instantiates them fresh per request, which
 * is what lets an isolate's WASM memory be collected after every image.
 */
export interface VisionWasm {
  /**
   * libjpeg-turbo's decompressor with arithmetic decoding and our row-streaming glue
   * (`shared/imaging/wasm/jpeg.decode.wasm`, built by native/jpeg/build.sh): DCT-domain scaling.
   */
  jpegDecoder: WebAssembly.Module;
  /**
   * libwebp's decoder and demuxer with our glue (`shared/imaging/wasm/webp.decode.wasm`, built by
   * native/webp/build.sh): WebP scaled while decoding.
   */
  webpDecoder: WebAssembly.Module;
  /**
   * zlib-ng's inflate with our glue (`shared/imaging/wasm/zlib.wasm`, built by
   * native/zlib/build.sh): a PNG's image data and ICC profile, 64 KB at a time.
   */
  zlib: WebAssembly.Module;
  /**
   * Our own 128-bit SIMD kernels (`shared/imaging/wasm/vision.simd.wasm`, built from the .wat beside
   * it): PNG unfiltering and alpha flattening, the resampler's Lanczos passes, and the encoder's
   * colour conversion, DCT, quantise-and-count and scan write. Optional: without it fitting runs the
   * same arithmetic in JS, with byte-identical results, only slower.
   */
  simd?: WebAssembly.Module;
}

export type ImageMediaType = SupportedMediaType;

export interface FitOptions {
  /** Maximum length of the `data:<type>;base64,...` URL (vision.embed_target_bytes). */
  embedTargetBytes: number;
  /** Long edge of the embedded image (vision.max_long_edge). */
  maxLongEdge: number;
  /** Width x height from the header above which the image is refused before decoding. */
  maxInputPixels: number;
  /** [x1, y1, x2, y2] in original pixels, clamped to the image. */
  region?: [number, number, number, number];
}

export interface FitResult {
  mediaType: ImageMediaType;
  data: Uint8Array;
  width: number;
  height: number;
  /** Length of the data: URL that embeds `data`; never over the budget. */
  dataUrlBytes: number;
  original: { mediaType: ImageMediaType; width: number; height: number; bytes: number };
  note: string;
  encodeAttempts: number;
  /** Decodes of the source this fit ran (one per size tried; 0 when passed through); for logs and benchmarks. */
  decodes: number;
  passedThrough: boolean;
  /** Output pixels per original pixel (1 when not scaled). */
  scale: number;
  crop?: { x: number; y: number; width: number; height: number };
  /** Largest WASM memory any codec instance of this call reached (bytes); for logs and benchmarks. */
  wasmPeakBytes: number;
  /** JPEG quality of the output, absent when passed through or sent as PNG; on the scale of `jpegTables`. */
  quality?: number;
  /** Base quantisation tables the baseline encoder chose for this image (shared/imaging/jpeg.baseline.ts); for logs and benchmarks. */
  jpegTables?: string;
  /** Chroma sampling of a JPEG output of the baseline encoder: 4:2:0, or 4:4:4 where 4:2:0 fitted at quality 100 (docs/vision.md). */
  chroma?: "4:2:0" | "4:4:4";
  /** True when our WASM SIMD kernels (VisionWasm.simd) ran the resampling (and the baseline encoder); for logs and benchmarks. */
  simd?: boolean;
}

/** Fits an image into the embed budget (WASM codecs bound by the runtime entry). */
export type ImageFitter = (bytes: Uint8Array, options: FitOptions) => Promise<FitResult>;

/** The tools whose work the savings ledger counts (docs/stats.md). */
export type { LedgerTool };

/** One request's counts for one tool, by provider and model where they apply. */
export interface LedgerEntry {
  tool: LedgerTool;
  /** The provider that answered (or would have): search/extract/llm; absent for vision and evict. */
  provider?: string;
  /** The LLM model (llm), or the eviction strategy (evict). */
  model?: string;
  /**
   * No answer confirmed `model` (the provider refused the request, or never answered): the ledger
   * counts the entry under it only if an earlier answer did, else under "(failed)" (docs/stats.md).
   */
  unconfirmed?: boolean;
  /**
   * The proxied session (tool `llm`): the caller's `X-Session-Id`, or the derived `X-Edge-Session`.
   * The entry is also counted under it, for GET /v1/stats/sessions (docs/stats.md "Sessions").
   */
  session?: string;
  /** Counter name to increment, named as docs/stats.md lists them for the tool. */
  counts: Readonly<Record<string, number>>;
  /** When it happened (epoch ms), which picks its hourly bucket. */
  at: number;
}

/** The savings ledger's write side. `record` gathers in memory and never throws or waits. */
export interface Ledger {
  record(entry: LedgerEntry): void;
}

/** One counter of one hourly bucket, as the ledger stores it (docs/storage.md). */
export interface LedgerRow {
  /** The bucket: the start of its hour, epoch ms. */
  hour: number;
  tool: LedgerTool;
  /** "" where none applies. */
  provider: string;
  /** The LLM model, or the eviction strategy; "" where none applies. */
  model: string;
  counter: string;
  /** A whole number ≥ 0. */
  value: number;
  /**
   * A session's row (tool `llm`): its counts kept apart from the tool's, read by GET
   * /v1/stats/sessions only; absent on the tool's own rows. Its `first_at` and `last_at` keep the
   * least and the most (counterCombine), every other counter adds.
   */
  session?: string;
}

/** What `GET /v1/stats` asks of the ledger: the window ending with the hour of `now`, and its prices. */
export interface StatsRequest {
  window: StatsWindow;
  now: number;
  pricing: Config["pricing"];
}

/** Where the ledger's buckets are kept: a Durable Object on Workers, Deno KV on Deno. */
export interface LedgerStore {
  /**
   * Adds each row's value to its counter (creating it), and drops buckets past their 35 days. A
   * bucket keeps LEDGER_NAMES_PER_HOUR model names per tool; a row of a further name is added under
   * LEDGER_OTHER_NAME (`BucketNames`, shared/stats/ledger.ts).
   */
  add(rows: readonly LedgerRow[]): Promise<void>;
  /**
   * The `/v1/stats` answer for `request`, summed where the buckets are kept (`StatsFold`), so what
   * crosses to the caller is bounded by the answer, not by the counters of the window.
   */
  report(request: StatsRequest): Promise<StatsResponse>;
  /** The GET /v1/stats/sessions answer for `request`, summed where the buckets are kept (`SessionsFold`). */
  sessions(request: StatsRequest): Promise<SessionsResponse>;
}

/** The ports a runtime entry hands every tool. */
export interface AppPorts {
  cache: CacheStore;
  flight: SingleFlight;
  fetch: FetchFn;
  /**
   * Fetches a URL a caller supplied (and each redirect it leads to), only ever through safeFetch,
   * after the gate. A runtime that can connect only to an address it checked itself does it here
   * (Deno: docs/security.md, "time of check against time of use"); without one, `fetch` serves.
   */
  untrustedFetch?: FetchFn;
  clock: Clock;
  log: Logger;
  fitImage: ImageFitter;
  /** Per-session repeat-cap counters. */
  embeds: EmbedCounter;
  /** A DNS-over-HTTPS resolver per resolver URL, with its answer cache kept for the isolate. */
  dnsResolver: (url: string) => DnsResolver;
  ledger: Ledger;
  /** The ledger's buckets, read by `GET /v1/stats`. */
  ledgerStore: LedgerStore;
}

/** What a runtime entry hands `createApp`: its ports, what it is, and its configuration. */
export interface AppDeps extends AppPorts {
  runtime: "workerd" | "deno";
  version: string;
  /** The effective configuration; throws AppError 500 `config_error` when it is unusable. */
  config: () => LoadedConfig;
}

/**
 * What a tool's service runs with for one request: the ports, the configuration and its secrets
 * (a `LoadedConfig` too, so provider resolution takes it as it is), and the request's id.
 */
export interface RequestContext {
  ports: AppPorts;
  config: Config;
  secrets: Secrets;
  requestId: string;
  /**
   * Who is calling, to keep one caller's session state (repeat-embed counters, eviction memory)
   * apart from another's under the same session id: a hash of the credential presented (see
   * callerOf in shared/http/auth.ts), never the credential; computed on first use.
   */
  caller(): Promise<string>;
}
