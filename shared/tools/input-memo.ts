/**
 * The validated inputs of small JSON bodies a tool has seen before, per isolate (or process): an
 * agent repeats the same request (the same search, the same body bytes), and the repeat is then
 * not parsed and validated again (docs/speed.md, "The repeated hit"). What a body's text and the
 * headers a tool reads make is the same every time, so it is kept deep-frozen and shared; the
 * checks that depend on the request (token, origin, Content-Type, body limit) still run on each.
 */
import { deepFreeze } from "../frozen";
import { keepRecent } from "../recent";

/** Bodies longer than this (characters) are not kept: a repeat is a small request. */
export const INPUT_MEMO_CHARS = 1024;
/** How many inputs are kept, the least recently used dropped first. */
export const INPUT_MEMO_ENTRIES = 256;

export class InputMemo {
  private readonly inputs = new Map<string, unknown>();

  /**
   * The key of a body `text` sent to `tool` with `headers` (the values of the headers the tool
   * reads, in its order), or null when the body is too long to keep.
   */
  key(tool: string, headers: readonly (string | null)[], text: string): string | null {
    if (text.length > INPUT_MEMO_CHARS) return null;
    // A header value holds no newline, and no part is empty: the first blank line ends the headers.
    let key = tool;
    for (const value of headers) key += value === null ? "\n-" : `\n=${value}`;
    return `${key}\n\n${text}`;
  }

  /** The input kept under `key`, made the most recently used, or undefined. */
  get(key: string): unknown {
    const input = this.inputs.get(key);
    if (input !== undefined) keepRecent(this.inputs, key, input, INPUT_MEMO_ENTRIES);
    return input;
  }

  /** Keeps `input` (deep-frozen) under `key` and returns it. */
  set<T>(key: string, input: T): T {
    keepRecent(this.inputs, key, deepFreeze(input), INPUT_MEMO_ENTRIES);
    return input;
  }
}
