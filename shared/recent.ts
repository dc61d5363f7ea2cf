/** Bounded maps that drop the least recently used entry first. */

/**
 * Sets `key` to `value` as the most recently used entry of `map` (a Map iterates in insertion
 * order), dropping the least recently used past `limit` entries.
 * @example keepRecent(inputs, key, input, 256)
 */
export function keepRecent<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value as K);
}
