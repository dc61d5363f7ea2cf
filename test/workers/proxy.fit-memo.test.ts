/**
 * The isolate's memory of fits (shared/proxy/fit-memo.ts) in workerd, in front of the real KV: a
 * screenshot sent again is found without a store read and goes out as the same bytes; the store
 * still holds the fit for another isolate; the memory stays within its bound, oldest out first.
 */
import { describe, expect, it } from "vitest";
import { encodeJson } from "../../shared/http/body";
import { toBase64 } from "../../shared/media/data-url";
import type { CacheStore } from "../../shared/ports";
import { fitAndKeep, FitMemory, knownFits } from "../../shared/proxy/fit-memo";
import { ANTHROPIC } from "../../shared/llm/anthropic.provider";
import { transformConversation } from "../../shared/proxy/transform";
import { workersDeps } from "../../workers/deps";
import { encodePng, screenshotPixels } from "../fixtures/images";
import { FIT_SETTINGS, testEnv, uniqueToken } from "./helpers";

const screenshot = async (width: number, height: number, seed: number) =>
  toBase64(await encodePng(screenshotPixels(width, height, seed), width, height, 3));

/** The real KV store of the Workers entry, its reads of fits counted. */
function countedStore() {
  const store = workersDeps(testEnv).cache;
  const reads: string[] = [];
  const cache: CacheStore = {
    get: (key) => {
      if (key.startsWith("proxy:v1:fit:")) reads.push(key);
      return store.get(key);
    },
    put: (key, entry, ttl) => store.put(key, entry, ttl),
    delete: (key) => store.delete(key),
  };
  return { cache, reads };
}

describe("the isolate's memory of fits", () => {
  it("finds a screenshot sent again without reading the store, and sends the same bytes", async () => {
    const tag = uniqueToken();
    const shot = await screenshot(1920, 1080, 7_000 + Math.floor(Math.random() * 1e6));
    const body = {
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      system: `memo ${tag}`,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "computer", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: shot } }],
            },
          ],
        },
      ],
    };
    const { cache, reads } = countedStore();
    const ports = { cache, clock: Date.now, fitImage: workersDeps(testEnv).fitImage };
    const format = ANTHROPIC.paths["/v1/messages"]!.format;
    const first = await transformConversation(body, ANTHROPIC, format, `s1-${tag}`, FIT_SETTINGS, ports);
    await first.writes;
    expect([first.fitted, first.firstFits]).toEqual([1, 1]);
    expect(reads).toHaveLength(1); // looked up once, not found: fitted

    const again = await transformConversation(
      JSON.parse(JSON.stringify(body)),
      ANTHROPIC,
      format,
      `s2-${tag}`,
      FIT_SETTINGS,
      ports,
    );
    expect([again.fitted, again.firstFits]).toEqual([1, 0]);
    expect(reads).toHaveLength(1); // no store read the second time
    expect(Buffer.from(encodeJson(again.body)).equals(Buffer.from(encodeJson(first.body)))).toBe(true);

    // Another isolate (an empty memory) finds the same fit in KV.
    const elsewhere = await knownFits([shot], { ...FIT_SETTINGS }, ports, new FitMemory(16 * 1024 * 1024));
    expect(reads).toHaveLength(2);
    const sentImage = (first.body.messages as any[])[2].content[0].content[0].source;
    expect(elsewhere.known[0]).toEqual({ mediaType: sentImage.media_type, data: sentImage.data });
  });

  it("stays within its bound, the least recently used out first, which the store then answers", async () => {
    const { cache, reads } = countedStore();
    const ports = { cache, clock: Date.now, fitImage: workersDeps(testEnv).fitImage };
    const shape = { embedTargetBytes: 4_096, maxLongEdge: 320, maxInputPixels: 14_745_600 };
    const base = Math.floor(Math.random() * 1e6);
    const shots: string[] = [];
    for (let i = 0; i < 8; i++) shots.push(await screenshot(640, 400, base + i));
    // What one image and its fit take, from a fit into a large memory: the bound holds 4 of them (an entry may take a quarter).
    const probe = new FitMemory(16 * 1024 * 1024);
    const probed = await knownFits([shots[0]!], shape, ports, probe);
    await fitAndKeep(probed.keys[0]!, shots[0]!, shape, ports, [], probe);
    const memory = new FitMemory(Math.ceil(probe.chars * 4.5));
    reads.length = 0;
    const fits = [];
    for (const shot of shots) {
      const { keys, known } = await knownFits([shot], shape, ports, memory);
      if (shot !== shots[0]) expect(known[0]).toBeUndefined();
      const writes: Promise<void>[] = [];
      fits.push(await fitAndKeep(keys[0]!, shot, shape, ports, writes, memory));
      await Promise.all(writes);
      expect(memory.chars).toBeLessThanOrEqual(memory.maxChars);
    }
    expect(memory.size).toBe(4);
    expect(reads).toHaveLength(shots.length);

    // The newest is remembered: no read. The oldest was let go: read from KV, the same fit.
    const newest = await knownFits([shots.at(-1)!], shape, ports, memory);
    expect(reads).toHaveLength(shots.length);
    expect(newest.known[0]).toEqual(fits.at(-1));
    const oldest = await knownFits([shots[0]!], shape, ports, memory);
    expect(reads).toHaveLength(shots.length + 1);
    expect(oldest.known[0]).toEqual(fits[0]);
    expect(memory.chars).toBeLessThanOrEqual(memory.maxChars);
  });
});
