/**
 * Bench Worker for bench/string-keys.ts: what a `Map` or `Set` keyed by a long string (a base64
 * image) costs a lookup in workerd, beside `===` of the same strings (GET /?n=…&reps=…&mode=…).
 * Each lookup's string is a new slice of a JSON body, as a request's parse makes it.
 */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function base64Like(n: number, seed: number): string {
  const parts: string[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    parts.push(ALPHABET[(x >>> 8) & 63]!);
  }
  return parts.join("");
}

interface Texts {
  /** A body holding the text at 6..6+n. */
  body: string;
  /** The same text, a string of its own (as the fit memory keeps an image). */
  own: string;
  /** A Map keyed by `own`. */
  map: Map<string, number>;
  /** A body holding another text of the same length, never used as a key before. */
  other: string;
}
const made = new Map<number, Texts>();

function texts(n: number): Texts {
  let found = made.get(n);
  if (found === undefined) {
    const text = base64Like(n, 7);
    const own = new TextDecoder().decode(new TextEncoder().encode(text));
    found = { body: `{"a":"${text}"}`, own, map: new Map([[own, 1]]), other: `{"a":"${base64Like(n, 9)}"}` };
    made.set(n, found);
  }
  return found;
}

/** One lookup of each mode; its result keeps the work from being dropped. */
const MODES: Record<string, (t: Texts, n: number, same: string) => number> = {
  // A new slice alone: the floor of the modes that make one.
  slice: (t, n) => t.body.slice(6, 6 + n).length & 1,
  // `===` of a new slice and the key's text (equal: compared in full).
  eq: (t, n) => (t.body.slice(6, 6 + n) === t.own ? 1 : 0),
  // The same slice each time, against the key's text.
  "eq-same": (t, _n, same) => (same === t.own ? 1 : 0),
  // Map.get with a new slice each time.
  map: (t, n) => t.map.get(t.body.slice(6, 6 + n)) ?? 0,
  // Map.get with the same slice each time.
  "map-same": (t, _n, same) => t.map.get(same) ?? 0,
  // A new slice put in a new Map and found there: its own key, nothing else in the Map.
  "new-map": (t, n) => {
    const key = t.body.slice(6, 6 + n);
    return new Map([[key, 1]]).get(key)!;
  },
  // The same with a text no Map held before this mode ran.
  "new-map-other": (t, n) => {
    const key = t.other.slice(6, 6 + n);
    return new Map([[key, 1]]).get(key)!;
  },
};

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const mode = MODES[url.searchParams.get("mode") ?? ""];
    if (mode === undefined) return new Response("ready");
    const n = Number(url.searchParams.get("n"));
    const reps = Number(url.searchParams.get("reps"));
    const t = texts(n);
    const same = t.body.slice(6, 6 + n);
    let out = 0;
    for (let i = 0; i < reps; i++) out += mode(t, n, same);
    return new Response(String(out));
  },
};
