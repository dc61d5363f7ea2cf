/** evictContext through both format adapters: the spec's counts, what is retired, what is kept. */
import { describe, expect, it } from "vitest";
import { ANTHROPIC_MESSAGES } from "../../shared/llm/anthropic.messages";
import { EvictRequest, EvictResponse } from "../../shared/eviction/evict.schema";
import { evictContext } from "../../shared/eviction/evict.service";
import { RETIRED_IMAGE_TEXT } from "../../shared/llm/image-blocks";
import { OPENAI_CHAT } from "../../shared/llm/openai.chat";
import { conversation, deepFreeze, FORMATS, screenshots, type Turn } from "./eviction.fixtures";

const tool = (...images: number[]): Turn => ({ kind: "tool", images });
const upload = (...images: number[]): Turn => ({ kind: "upload", images });
const uploads = (n: number): Turn => upload(...Array<number>(n).fill(1_000));
const adapterOf = { anthropic: ANTHROPIC_MESSAGES, openai: OPENAI_CHAT };

describe.each(FORMATS)("%s: the expected counts of eviction.md", (format) => {
  const cases: Array<[string, Turn[], number, boolean]> = [
    ["20 screenshots", screenshots(20), 0, true],
    ["21 screenshots", screenshots(21), 8, true],
    ["28 screenshots", screenshots(28), 8, true],
    ["29 screenshots", screenshots(29), 16, true],
    ["one carrier with 25 blocks", [tool(...Array<number>(25).fill(1_000))], 1, true],
    ["carriers [10,10,10,10]", Array.from({ length: 4 }, () => tool(...Array<number>(10).fill(1_000))), 2, true],
    ["5 carriers with 21 uploads", [uploads(21), ...screenshots(5)], 2, false],
    ["carriers [1,1] with 25 uploads", [...screenshots(2), uploads(25)], 0, false],
    ["13 carriers of 2 MB", screenshots(13, 2_000_000), 8, true],
    ["no carriers", [{ kind: "text" }, uploads(3), { kind: "text" }], 0, true],
  ];

  it.each(cases)("%s", (_name, turns, retired, fits) => {
    const messages = conversation(format, turns);
    const out = evictContext({ format, messages });
    expect(out.retired).toBe(retired);
    expect(out.stats.fits).toBe(fits);
    expect(out.stats.problem === undefined).toBe(fits);
    // 28: the front moved when the 21st came and the newest screenshot leaves it where it was.
    expect(out.stats.reason).toBe(retired === 0 ? "under_ceiling" : _name === "28 screenshots" ? "held" : "ceiling");
    // What the response claims is what the outbound copy holds.
    const after = adapterOf[format].inventory(out.messages);
    const blocksAfter = after.carriers.reduce((n, c) => n + c.blocks, 0) + after.uploads.length;
    expect(blocksAfter).toBe(out.stats.image_blocks_after);
    expect(out.stats.image_blocks_before - out.stats.image_blocks_after).toBe(out.evicted.length);
  });

  it("reports the api.md body for 21 screenshots", () => {
    const out = evictContext({ format, messages: conversation(format, screenshots(21, 1_000)) });
    expect(EvictResponse.parse(out)).toEqual(out);
    expect(out.retired).toBe(8);
    expect(out.evicted).toHaveLength(8);
    expect(out.stats).toEqual({
      image_blocks_before: 21,
      image_blocks_after: 13,
      bytes_before: 21_000,
      bytes_after: 13_000,
      reserved_blocks: 0,
      reserved_bytes: 0,
      carriers_before: 21,
      retired_blocks: 8,
      fits: true,
      reason: "ceiling",
      limits: { max_blocks: 20, max_bytes: 24_000_000, batch: 8, floor: 3 },
    });
  });

  it("retires the oldest tool images, and only them", () => {
    const messages = conversation(format, screenshots(29));
    const out = evictContext({ format, messages });
    // Each screenshot turn is [assistant call, tool result]; the tool results sit at odd indices.
    const retiredMessages = out.evicted.map((e) => e.message);
    expect(retiredMessages).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i + 1));
    expect(JSON.stringify(out.messages.slice(33))).toBe(JSON.stringify(messages.slice(33)));
    expect(JSON.stringify(out.messages[31])).toContain(RETIRED_IMAGE_TEXT);
    expect(JSON.stringify(out.messages[33])).not.toContain(RETIRED_IMAGE_TEXT);
  });

  it("moves the front exactly 3 times as a session grows from 4 to 43 screenshots", () => {
    let previous = evictContext({ format, messages: conversation(format, screenshots(4)) });
    const moves: number[] = [];
    for (let n = 5; n <= 43; n++) {
      const out = evictContext({ format, messages: conversation(format, screenshots(n)) });
      if (out.retired !== previous.retired) moves.push(n);
      // The outbound copy of the previous request is an exact prefix of this one between moves.
      if (out.retired === previous.retired) {
        expect(JSON.stringify(out.messages.slice(0, previous.messages.length))).toBe(JSON.stringify(previous.messages));
      }
      previous = out;
    }
    expect(moves).toEqual([21, 29, 37]);
    expect(previous.retired).toBe(24);
  });

  it("never rewrites uploads, byte for byte, even when they push the request over", () => {
    const turns: Turn[] = [upload(5_000, 0), ...screenshots(30), upload(7_000), ...screenshots(5)];
    const messages = conversation(format, turns);
    const out = evictContext({ format, messages });
    expect(out.retired).toBeGreaterThan(0);
    const uploadIndices = [0, 61];
    for (const i of uploadIndices) {
      expect(JSON.stringify(out.messages[i])).toBe(JSON.stringify(messages[i]));
      expect(out.messages[i]).toBe(messages[i]); // shared, not even copied
    }
    expect(out.stats.reserved_blocks).toBe(3);
    expect(out.stats.reserved_bytes).toBe(12_000);
    expect(out.evicted.every((e) => !uploadIndices.includes(e.message))).toBe(true);
  });

  it("gives the same bytes for the same input, and never modifies the input", () => {
    const turns: Turn[] = [upload(2_000), ...screenshots(25, 3_000), tool(1_000, 0, 2_000)];
    const messages = deepFreeze(conversation(format, turns));
    const snapshot = structuredClone(messages);
    const first = evictContext({ format, messages });
    const second = evictContext({ format, messages: structuredClone(snapshot) });
    expect(first.retired).toBe(16); // 29 blocks: window 17 beside the upload, so two batches
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(messages).toEqual(snapshot);
  });

  it("counts base64 / data-URL characters and lets URL images weigh nothing", () => {
    // 21 URL screenshots are over the block ceiling but weigh 0 bytes.
    const out = evictContext({ format, messages: conversation(format, screenshots(21, 0)) });
    expect(out.stats.bytes_before).toBe(0);
    expect(out.retired).toBe(8);
    expect(out.evicted.every((e) => e.bytes === 0)).toBe(true);

    const heavy = evictContext({ format, messages: conversation(format, [tool(12_345)]) });
    expect(heavy.stats.bytes_before).toBe(12_345);
  });

  it("takes per-request limits", () => {
    const out = evictContext({
      format,
      messages: conversation(format, screenshots(8)),
      limits: { max_blocks: 5, batch: 2, floor: 1 },
    });
    expect(out.retired).toBe(4);
    expect(out.stats.limits).toEqual({ max_blocks: 5, max_bytes: 24_000_000, batch: 2, floor: 1 });
  });

  it("retires every image of a carrier at once, in place", () => {
    const messages = conversation(format, [tool(1_000, 2_000), ...screenshots(19)]);
    const out = evictContext({ format, messages });
    expect(out.retired).toBe(8); // 21 blocks over 20 carriers: window 19, batch 8
    expect(out.stats.retired_blocks).toBe(9);
    expect(out.evicted.slice(0, 2).map((e) => e.bytes)).toEqual([1_000, 2_000]);
  });
});

describe.each(FORMATS)("%s: a client's breakpoint on a retired image", (format) => {
  it("stays where the client put it, on the text that takes the image's place", () => {
    const adapter = adapterOf[format];
    const messages = conversation(format, screenshots(21));
    const [image] = adapter.inventory(messages).carriers[2]!.images;
    const partOf = (list: unknown[]) => {
      const blocks = (list[image!.message] as { content: Record<string, unknown>[] }).content;
      return image!.part === undefined
        ? blocks[image!.block]!
        : (blocks[image!.block]!.content as Record<string, unknown>[])[image!.part]!;
    };
    const field = format === "anthropic" ? "cache_control" : "prompt_cache_breakpoint";
    const mark = format === "anthropic" ? { type: "ephemeral", ttl: "1h" } : { mode: "explicit" };
    partOf(messages)[field] = mark;
    const out = evictContext({ format, messages });
    expect(out.retired).toBe(8);
    expect(partOf(out.messages)).toEqual({
      type: "text",
      text: RETIRED_IMAGE_TEXT,
      [field]: mark,
    });
  });
});

describe("anthropic specifics", () => {
  const image = (data: string) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } });
  const toolResult = (id: string, ...images: unknown[]) => ({
    type: "tool_result",
    tool_use_id: id,
    content: [{ type: "text", text: id }, ...images],
  });

  it("walks sibling tool_results newest first: the oldest sibling goes first", () => {
    const messages = [
      {
        role: "user",
        content: [toolResult("a", image("AAAA")), toolResult("b", image("BBBB")), toolResult("c", image("CCCC"))],
      },
    ];
    const out = evictContext({ format: "anthropic", messages, limits: { max_blocks: 2 } });
    expect(out.retired).toBe(1);
    expect(out.evicted).toEqual([{ message: 0, block: 0, part: 1, bytes: 4 }]);
    const content = (out.messages[0] as { content: Array<{ content: unknown[] }> }).content;
    expect(content[0]!.content).toEqual([
      { type: "text", text: "a" },
      { type: "text", text: RETIRED_IMAGE_TEXT },
    ]);
    expect(content[1]).toBe(messages[0]!.content[1]);
  });

  it("treats top-level images anywhere as uploads and ignores string tool results", () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "hi" }, image("QUJD")] },
      { role: "assistant", content: [image("REVG")] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "just text" }] },
      { role: "user", content: "plain" },
    ];
    const inventory = ANTHROPIC_MESSAGES.inventory(messages);
    expect(inventory.carriers).toEqual([]);
    expect(inventory.uploads).toEqual([
      { message: 0, block: 1, bytes: 4 },
      { message: 1, block: 0, bytes: 4 },
    ]);
  });

  it("counts url and file sources as 0 bytes", () => {
    const messages = [
      {
        role: "user",
        content: [
          toolResult(
            "t",
            { type: "image", source: { type: "url", url: "https://x.test/a.png" } },
            { type: "image", source: { type: "file", file_id: "file_1" } },
          ),
        ],
      },
    ];
    expect(ANTHROPIC_MESSAGES.inventory(messages).carriers).toEqual([
      {
        message: 0,
        block: 0,
        blocks: 2,
        bytes: 0,
        images: [
          { message: 0, block: 0, part: 1, bytes: 0 },
          { message: 0, block: 0, part: 2, bytes: 0 },
        ],
      },
    ]);
  });
});

describe("openai specifics", () => {
  const data = "data:image/png;base64,AAAA"; // 26 characters

  it("understands image_url objects, image_url strings and input_image parts", () => {
    const messages = [
      {
        role: "tool",
        tool_call_id: "1",
        content: [
          { type: "image_url", image_url: { url: data } },
          { type: "image_url", image_url: data },
          { type: "input_image", image_url: data },
          { type: "input_image", image_url: "https://x.test/a.png" },
          { type: "text", text: "caption" },
        ],
      },
      { role: "user", content: [{ type: "input_image", image_url: data }] },
    ];
    const inventory = OPENAI_CHAT.inventory(messages);
    expect(inventory.carriers).toHaveLength(1);
    expect(inventory.carriers[0]).toMatchObject({ message: 0, block: -1, blocks: 4, bytes: 78 });
    expect(inventory.uploads).toEqual([{ message: 1, block: 0, bytes: 26 }]);

    const out = evictContext({ format: "openai", messages, limits: { max_blocks: 1 } });
    expect(out.retired).toBe(1);
    expect(out.evicted.map((e) => e.block)).toEqual([0, 1, 2, 3]);
    expect((out.messages[0] as { content: unknown[] }).content).toEqual([
      { type: "text", text: RETIRED_IMAGE_TEXT },
      { type: "text", text: RETIRED_IMAGE_TEXT },
      { type: "input_text", text: RETIRED_IMAGE_TEXT },
      { type: "input_text", text: RETIRED_IMAGE_TEXT },
      { type: "text", text: "caption" },
    ]);
    expect(out.messages[1]).toBe(messages[1]);
  });

  it("counts image parts outside tool messages as uploads, whatever the role", () => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "assistant", content: [{ type: "image_url", image_url: { url: data } }] },
      { role: "tool", tool_call_id: "1", content: "text only" },
    ];
    expect(OPENAI_CHAT.inventory(messages)).toEqual({ carriers: [], uploads: [{ message: 1, block: 0, bytes: 26 }] });
  });
});

describe("EvictRequest", () => {
  it("accepts the api.md request and rejects bad limits and formats", () => {
    const ok = EvictRequest.safeParse({
      format: "openai",
      messages: [{ role: "user", content: "hi" }],
      limits: { floor: 0 },
    });
    expect(ok.success).toBe(true);
    for (const limits of [{ batch: 0 }, { floor: -1 }, { max_blocks: 2.5 }, { max_bytes: 0 }]) {
      expect(EvictRequest.safeParse({ format: "anthropic", messages: [], limits }).success).toBe(false);
    }
    expect(EvictRequest.safeParse({ format: "gemini", messages: [] }).success).toBe(false);
    expect(EvictRequest.safeParse({ format: "anthropic", messages: ["text"] }).success).toBe(false);
  });

  it("keeps unknown message fields", () => {
    const parsed = EvictRequest.parse({
      format: "anthropic",
      messages: [{ role: "user", content: "x", cache_control: 1 }],
    });
    expect(parsed.messages[0]).toEqual({ role: "user", content: "x", cache_control: 1 });
  });

  it("describes every field", () => {
    const shape = EvictRequest.shape;
    for (const field of [shape.format, shape.messages, shape.limits]) expect(field.description).toBeTruthy();
    const limits = shape.limits.unwrap().shape;
    for (const field of Object.values(limits)) expect(field.description).toBeTruthy();
  });
});
