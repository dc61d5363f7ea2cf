/**
 * A map and a set of long texts (a request's base64 images) found by a short key. In workerd a
 * string used as a `Map` or `Set` key is internalized: keyed by a screenshot's whole base64 (about
 * 116,000 characters), each lookup with a new string (a slice of the request's body) went through
 * the isolate's string table, compared in full there with an equal string, or added to it
 * (old-generation bytes that bring V8's full collections sooner: docs/speed.md, "the first fit's
 * extra"). It was not a hash of every character: V8 hashes a string over 16,383 characters by its
 * length alone (measured: docs/speed.md, "The image lookups"). Here the key is the text's length
 * and a few windows sampled across it; the whole text is kept in its entry and a lookup is answered
 * only by a text equal to it in full (`===`), so two texts that share a key never share an entry.
 */

/** Characters in each sampled window. */
const WINDOW = 12;
/** Windows sampled, spread evenly inside the text (its first and last characters are a format's header and end). */
const WINDOWS = 6;
/** A text this short is its own key. */
const SHORT = WINDOW * WINDOWS;

/**
 * The short key a text is filed under: a number mixed (FNV-1a) from its length and WINDOWS windows
 * of WINDOW characters, read in place. A string built of the windows cost each lookup six slices,
 * a concatenation and that key's own pass through the string table (docs/speed.md, "The image
 * lookups"); a small integer is its own hash.
 */
export function textKey(text: string): string | number {
  if (text.length <= SHORT) return text;
  let key = Math.imul(0x811c9dc5 ^ text.length, 0x01000193);
  for (let k = 1; k <= WINDOWS; k++) {
    const at = Math.floor((text.length * k) / (WINDOWS + 1));
    for (let i = at; i < at + WINDOW; i++) key = Math.imul(key ^ text.charCodeAt(i), 0x01000193);
  }
  // Within V8's small integers (31 bits), so the key is never a heap number.
  return key & 0x3fffffff;
}

interface Entry<V> {
  readonly text: string;
  value: V;
}

/** A map from texts to values; a text is found only by a text equal to it in full. */
export class TextMap<V> {
  /** Entries by short key; nearly always one a key. */
  private readonly buckets = new Map<string | number, Entry<V>[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(text: string): V | undefined {
    return this.entry(text)?.value;
  }

  has(text: string): boolean {
    return this.entry(text) !== undefined;
  }

  set(text: string, value: V): void {
    const key = textKey(text);
    const bucket = this.buckets.get(key);
    const found = bucket?.find((entry) => entry.text === text);
    if (found !== undefined) {
      found.value = value;
      return;
    }
    if (bucket === undefined) this.buckets.set(key, [{ text, value }]);
    else bucket.push({ text, value });
    this.count += 1;
  }

  delete(text: string): boolean {
    const key = textKey(text);
    const bucket = this.buckets.get(key);
    const at = bucket?.findIndex((entry) => entry.text === text) ?? -1;
    if (bucket === undefined || at < 0) return false;
    if (bucket.length === 1) this.buckets.delete(key);
    else bucket.splice(at, 1);
    this.count -= 1;
    return true;
  }

  private entry(text: string): Entry<V> | undefined {
    return this.buckets.get(textKey(text))?.find((entry) => entry.text === text);
  }
}

/** A set of texts; a text is in it only if a text equal to it in full was added. */
export class TextSet {
  private readonly map = new TextMap<true>();

  get size(): number {
    return this.map.size;
  }

  add(text: string): this {
    this.map.set(text, true);
    return this;
  }

  has(text: string): boolean {
    return this.map.has(text);
  }
}
