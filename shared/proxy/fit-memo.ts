/**
 * Where the proxy finds what became of an image (docs/proxy.md, "Fitting"): the isolate's own
 * memory first, then the cache store (`proxy:v1:fit:`, docs/storage.md), then the fitter. A
 * computer-use agent sends every earlier screenshot again on each turn; the memory makes such a
 * turn cost no hash and no store read per image. It is an exact-match memory: a short key of
 * sampled windows only files an image (shared/text-map.ts); it is found only by its whole base64
 * text (compared in full), never by the sample or a weak hash.
 */
import { sha256Hex } from "../hash";
import { hasControlCharacter } from "../http/body";
import { AppError } from "../http/errors";
import { decodeImageData, toBase64 } from "../media/data-url";
import type { InlineImage } from "../llm/format";
import type { AppPorts } from "../ports";
import { TextMap } from "../text-map";

type Ports = Pick<AppPorts, "cache" | "clock" | "fitImage">;

/** A fitted image as sent and as kept in the store: an inline image, as the wire formats write one. */
type FittedImage = InlineImage;
/** What is kept for an image the fitter refused, so a session's later requests do not decode it again. */
interface RefusedImage {
  refused: true;
}
/** A fit, or null for a refusal (the image goes as it came). */
export type FitOutcome = FittedImage | null;

/** The settings that shape a fit (and so its key). */
export interface FitShape {
  readonly embedTargetBytes: number;
  readonly maxLongEdge: number;
  readonly maxInputPixels: number;
}

const FIT_TTL_MS = 24 * 60 * 60_000;

/** What the memory holds for one image: its store key under `shape`, and its outcome once known. */
interface Remembered {
  readonly shape: string;
  readonly key: string;
  outcome?: FitOutcome;
  expiresAt?: number;
}

/**
 * One remembered image: its own copy of the image, what was decided for it, and whether it holds
 * no control character (checked once, when the image is first remembered).
 */
interface Slot {
  image: string;
  entry: Remembered;
  plain: boolean;
}

/**
 * A memory bounded by the characters of its images (the base64 plus the fit it holds), least
 * recently used out first. Images are found by a short key and compared whole (shared/text-map.ts:
 * a `Map` keyed by the base64 itself put each new string through the isolate's string table). A
 * request's parse takes this memory's own copy of each image it finds (`plainCopy`), so a seen
 * image is compared in full once a request, not again at its `get`. Each image is kept as its own
 * copy (one kept as it came would keep a request's whole body alive as a slice's parent).
 */
export class FitMemory {
  /** By image. */
  private readonly slots = new TextMap<Slot>();
  /** Least recently used first (a Set keeps insertion order; its keys are objects, hashed by identity). */
  private readonly order = new Set<Slot>();
  private held = 0;

  constructor(readonly maxChars: number) {}

  /** Characters held: at most `maxChars`. */
  get chars(): number {
    return this.held;
  }

  get size(): number {
    return this.slots.size;
  }

  get(data: string): Remembered | undefined {
    const slot = this.slots.get(data);
    if (slot === undefined) return undefined;
    this.order.delete(slot);
    this.order.add(slot);
    return slot.entry;
  }

  /**
   * This memory's own copy of `data` (the same text, compared whole) when it holds no control
   * character, else undefined. A request body's parse puts it in the parsed value in place of its
   * slice of the body (shared/http/body.ts, `parseJsonText`'s `known`): the parse need not check it
   * again, and the request's own lookup of it (`get`, in `knownFits`) is then answered by identity,
   * not by a second comparison of its whole text. Not a use: the order of eviction is left as it is.
   */
  plainCopy(data: string): string | undefined {
    const slot = this.slots.get(data);
    return slot?.plain === true ? slot.image : undefined;
  }

  /** Remembers `entry` for `data` (replacing what was there); an image over a quarter of the memory is not kept. */
  set(data: string, entry: Remembered): void {
    const old = this.slots.get(data);
    if (old !== undefined) this.forget(old);
    const chars = charsOf(data, entry);
    if (chars > this.maxChars / 4) return;
    while (this.held + chars > this.maxChars) this.forget(this.order.values().next().value as Slot);
    const image = old?.image ?? ownCopy(data);
    const slot = { image, entry, plain: old?.plain ?? !hasControlCharacter(image) };
    this.slots.set(image, slot);
    this.order.add(slot);
    this.held += chars;
  }

  private forget(slot: Slot): void {
    this.slots.delete(slot.image);
    this.order.delete(slot);
    this.held -= charsOf(slot.image, slot.entry);
  }
}

const charsOf = (data: string, entry: Remembered) =>
  data.length + entry.key.length + (entry.outcome ? entry.outcome.data.length + entry.outcome.mediaType.length : 0);

/**
 * A string that shares no characters with `text`: the image data is a slice of the request body
 * (shared/http/body.ts), which a key kept as it is would keep whole.
 */
function ownCopy(text: string): string {
  return new TextDecoder().decode(new TextEncoder().encode(text));
}

/** The isolate's memory of fits: 16 MiB of characters (about 75 screenshots of 1920x1080 with their fits). */
export const fitMemory = new FitMemory(16 * 1024 * 1024);

const shapeOf = (shape: FitShape) => `${shape.embedTargetBytes}:${shape.maxLongEdge}:${shape.maxInputPixels}`;

/**
 * The store key of each image and what is known of it: from the memory, else (keys hashed one at
 * a time, so 100 screenshots are never encoded at once) every miss looked up in the store at once.
 * `undefined`: nothing known, the image is to be fitted.
 */
export async function knownFits(
  images: readonly string[],
  shape: FitShape,
  ports: Ports,
  memory: FitMemory = fitMemory,
): Promise<{ keys: string[]; known: (FitOutcome | undefined)[] }> {
  const tag = shapeOf(shape);
  const now = ports.clock();
  const keys: string[] = [];
  const known: (FitOutcome | undefined)[] = [];
  const misses: number[] = [];
  for (const [i, data] of images.entries()) {
    let entry = memory.get(data);
    if (entry?.shape !== tag) {
      entry = { shape: tag, key: await fitKey(data, tag) };
      memory.set(data, entry);
    }
    keys.push(entry.key);
    const fresh = entry.outcome !== undefined && (entry.expiresAt ?? 0) > now;
    known.push(fresh ? entry.outcome : undefined);
    if (!fresh) misses.push(i);
  }
  const stored = await Promise.all(misses.map((i) => storedFit(keys[i]!, ports)));
  misses.forEach((i, k) => {
    const hit = stored[k];
    if (hit === undefined) return;
    known[i] = hit.outcome;
    memory.set(images[i]!, { shape: tag, key: keys[i]!, outcome: hit.outcome, expiresAt: hit.expiresAt });
  });
  return { keys, known };
}

/** The cache key of an image's fit: its bytes and the settings that shape the result. */
async function fitKey(data: string, tag: string): Promise<string> {
  return `proxy:v1:fit:${await sha256Hex(`${tag}:${data}`)}`;
}

/** Standard base64, as `toBase64` writes a fit. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A stored fit or refusal with its expiry, or undefined (none, expired, malformed, or a store that cannot answer). */
async function storedFit(key: string, ports: Ports): Promise<{ outcome: FitOutcome; expiresAt: number } | undefined> {
  try {
    const hit = await ports.cache.get<FittedImage | RefusedImage>(key);
    if (!hit || hit.expiresAt <= ports.clock()) return undefined;
    const value = hit.value as Partial<FittedImage & RefusedImage> | null;
    if (value?.refused === true) return { outcome: null, expiresAt: hit.expiresAt };
    // A fit is base64 (which the request body is then written with unchecked, transform.ts `plain`).
    if (typeof value?.data === "string" && typeof value.mediaType === "string" && BASE64.test(value.data))
      return { outcome: { mediaType: value.mediaType, data: value.data }, expiresAt: hit.expiresAt };
  } catch {
    // A store that cannot answer costs one fit, never the request.
  }
  return undefined;
}

/**
 * Fits one image; null when the fitter refuses it (it is then sent as it came). What became of
 * it is remembered at once and written to the store by the promise pushed on `writes`, which the
 * caller awaits beside the provider call (a write never delays the request).
 */
export async function fitAndKeep(
  key: string,
  data: string,
  shape: FitShape,
  ports: Ports,
  writes: Promise<void>[],
  memory: FitMemory = fitMemory,
): Promise<FitOutcome> {
  let outcome: FitOutcome;
  try {
    const bytes = decodeImageData(data).bytes;
    const result = await ports.fitImage(bytes, {
      embedTargetBytes: shape.embedTargetBytes,
      maxLongEdge: shape.maxLongEdge,
      maxInputPixels: shape.maxInputPixels,
    });
    outcome = { mediaType: result.mediaType, data: toBase64(result.data) };
  } catch (error) {
    // Corrupt, a bomb, a format the fitter does not read: sent as it came (fit_skipped). A refusal
    // of the image itself (a 4xx) is kept too, so later requests do not decode it again.
    if (!(error instanceof AppError && error.status < 500)) return null;
    outcome = null;
  }
  const expiresAt = ports.clock() + FIT_TTL_MS;
  memory.set(data, { shape: shapeOf(shape), key, outcome, expiresAt });
  writes.push(keep(key, outcome ?? { refused: true }, expiresAt, ports));
  return outcome;
}

/** Keeps what became of an image for FIT_TTL_MS; a store that fails costs a fit on the next request. */
async function keep(key: string, value: FittedImage | RefusedImage, expiresAt: number, ports: Ports): Promise<void> {
  try {
    await ports.cache.put(key, { value, expiresAt }, FIT_TTL_MS);
  } catch {
    // Not kept: the next request fits it again, with the same bytes.
  }
}
