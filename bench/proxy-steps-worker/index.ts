/**
 * Bench Worker for bench/proxy-steps.ts: holds one request body (POST /body) and runs one step of
 * the proxy's path on it `k` times per request (GET /?step=…&k=…), so each step's cost in workerd
 * is timed from outside (the isolate's clocks stand still while it computes) without a profiler.
 */
import { decodeUtf8Body, encodeJson, parseJsonText } from "../../shared/http/body";
import { sha256Hex } from "../../shared/hash";
import { decodeImageData, toBase64 } from "../../shared/media/data-url";
import { FitMemory } from "../../shared/proxy/fit-memo";
import { TextSet } from "../../shared/text-map";

let bytes = new Uint8Array(0);
let text = "";
let value: unknown = null;
const plain = new Set<string>();
const memory = new FitMemory(16 * 1024 * 1024);
const CONTROL = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code));

/** A fit's bytes as large as a fitted screenshot's (about 190 KB): what toBase64 writes. */
const fitBytes = Uint8Array.from({ length: 190_000 }, (_, i) => (i * 2654435761) >>> 24);
/** A new slice of the body at its last image, as a new turn's parse leaves it. */
const lastImage = () => text.slice(images[images.length - 2], images[images.length - 1]);

const STEPS: Record<string, () => number | Promise<number>> = {
  none: () => 0,
  decode: () => decodeUtf8Body(bytes).length,
  parse: () => {
    plain.clear();
    value = parseJsonText(text, undefined, plain);
    return plain.size;
  },
  // The proxy's parse of a turn whose images the isolate has all seen (their check not run again).
  "parse-seen": () => {
    plain.clear();
    value = parseJsonText(text, undefined, plain, (contents) => memory.plainCopy(contents));
    return plain.size;
  },
  // A seen turn's lookups as the proxy makes them: the parse finds each image in the fit memory
  // and puts the memory's own copy in the value, and the transform's lookup of it is by identity.
  "seen-lookups": () => seenLookups((contents) => memory.plainCopy(contents)),
  // The same with the value holding the body's slice (as before the parse handed over the copy):
  // each image compared in full twice a turn.
  "seen-lookups-slice": () =>
    seenLookups((contents) => (memory.plainCopy(contents) === undefined ? undefined : contents)),
  // The lookups alone, of new slices of the body at each image, as three versions made them: the
  // parse's probe and then the value's string. "map": the memory and the `plain` set keyed by the
  // base64 itself (before the short keys, 1561fe9); "twice": the short keys, the value holding the
  // slice; "once": the short keys, the value holding the memory's copy (now).
  "lookups-map": () =>
    lookups((probe, string) => {
      byText.get(probe);
      new Set<string>().add(string);
      const slot = byText.get(string);
      if (slot === undefined) return false;
      byText.delete(string);
      byText.set(slot.image, slot);
      return true;
    }),
  "lookups-twice": () =>
    lookups((probe, string) => {
      memory.plainCopy(probe);
      new TextSet().add(string);
      return memory.get(string) !== undefined;
    }),
  "lookups-once": () =>
    lookups((probe) => {
      const copy = memory.plainCopy(probe) ?? probe;
      new TextSet().add(copy);
      return memory.get(copy) !== undefined;
    }),
  "json-parse": () => (JSON.parse(text) as unknown[]).length,
  // The parse's check of each long string (shared/http/body.ts, hasControlCharacter), alone.
  "control-check": () => {
    let found = 0;
    for (const string of plain) if (CONTROL.some((character) => string.includes(character))) found++;
    return found;
  },
  // The fit memory's lookups of each long string (shared/proxy/fit-memo.ts), every one a hit.
  "memo-lookup": () => {
    let hits = 0;
    for (const string of plain) if (memory.get(string) !== undefined) hits++;
    return hits;
  },
  encode: () => encodeJson(value, undefined, plain).byteLength,
  // The same with no string known to need no escape: each long one searched (a fit was, until issue 45).
  "encode-checked": () => encodeJson(value).byteLength,
  "text-encode": () => new TextEncoder().encode(text).byteLength,
  // A new screenshot's own steps (shared/proxy/fit-memo.ts), one image: its store key, the
  // memory's copy of it, the base64 decode before the fitter, the fit's base64.
  "new-key": async () => (await sha256Hex(`262144:1568:50000000:${lastImage()}`)).length,
  "new-memory-set": () => {
    const fresh = new FitMemory(16 * 1024 * 1024);
    fresh.set(lastImage(), { shape: "s", key: "k" });
    return fresh.size;
  },
  "new-b64-decode": () => decodeImageData(lastImage()).bytes.byteLength,
  "new-to-base64": () => toBase64(fitBytes).length,
  // The runtime's own base64 (TC39 Uint8Array base64) where it has one; -1 where it has none.
  "native-to-base64": () => (fitBytes as unknown as { toBase64?: () => string }).toBase64?.().length ?? -1,
  "native-from-base64": () =>
    (Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array }).fromBase64?.(lastImage()).byteLength ?? -1,
  "new-store-json": () =>
    JSON.stringify({ value: { mediaType: "image/jpeg", data: toBase64(fitBytes) }, expiresAt: 1 }).length,
};

/** Where each long string of the body is: [start, end) pairs. */
let images: number[] = [];
/** The fit memory as it was before the short keys: keyed by the base64 itself. */
const byText = new Map<string, { image: string }>();

/** `lookup` of two new slices of the body at each image (the parse's probe, the value's string); the hits. */
function lookups(lookup: (probe: string, string: string) => boolean): number {
  let hits = 0;
  for (let k = 0; k < images.length; k += 2)
    if (lookup(text.slice(images[k], images[k + 1]), text.slice(images[k], images[k + 1]))) hits++;
  return hits;
}

/** The parse of the body with `known`, then the fit memory's lookup of each long string of the value; the hits. */
function seenLookups(known: (contents: string) => string | undefined): number {
  const images: string[] = [];
  const seen = new TextSet();
  const plain = {
    add: (image: string) => {
      seen.add(image);
      images.push(image);
    },
  };
  value = parseJsonText(text, undefined, plain, known);
  let hits = 0;
  for (const image of images) if (memory.get(image) !== undefined) hits++;
  return hits;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "POST") {
      bytes = new Uint8Array(await request.arrayBuffer());
      text = decodeUtf8Body(bytes);
      value = parseJsonText(text, undefined, plain);
      images = [];
      for (const string of plain) {
        memory.set(string, { shape: "s", key: "k" });
        const start = text.indexOf(string);
        images.push(start, start + string.length);
        const image = new TextDecoder().decode(new TextEncoder().encode(string));
        byText.set(image, { image });
      }
      return new Response(String(bytes.byteLength));
    }
    const step = STEPS[url.searchParams.get("step") ?? "none"];
    if (!step) return new Response("no such step", { status: 404 });
    const k = Number(url.searchParams.get("k") ?? 1);
    let out = 0;
    for (let i = 0; i < k; i++) out += await step();
    return new Response(String(out));
  },
};
