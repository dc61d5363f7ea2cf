/** A computer-use session's turns for the proxy benches (proxy-session.bench.ts, proxy-profile.ts). */
import { encodePng, screenshotPixels } from "../test/fixtures/images";

export const MODEL = "claude-sonnet-4-5";
export const FIRST_TURN = 16;
export const LAST_TURN = Number(process.env.PROXY_SESSION_LAST_TURN ?? 40);
export const WIDTH = 1920;
export const HEIGHT = 1080;

/** A UI-like screenshot as a PNG: panels and lines of glyphs; dark inverts the light one. */
export async function screenshot(seed: number, dark: boolean): Promise<string> {
  const pixels = screenshotPixels(WIDTH, HEIGHT, seed);
  if (dark) for (let i = 0; i < pixels.length; i++) pixels[i] = 255 - pixels[i]!;
  return Buffer.from(await encodePng(pixels, WIDTH, HEIGHT, 3)).toString("base64");
}

/** Turn `turns` of a computer-use session: the task, then a screenshot action and its image per turn. */
export function turnBody(task: string, shots: readonly string[], turns: number, stream: boolean): string {
  const messages: unknown[] = [{ role: "user", content: task }];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "computer", input: { action: "screenshot" } }],
    });
    const result: unknown[] = [
      {
        type: "tool_result",
        tool_use_id: `toolu_${i}`,
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: shots[i]! } }],
      },
    ];
    // The emulator pauses 20 ms between streamed events, so the first event stands apart.
    if (stream && i === turns - 1) result.push({ type: "text", text: "[slowstream:20] go on" });
    messages.push({ role: "user", content: result });
  }
  const tools = [{ type: "computer_20250124", name: "computer", display_width_px: WIDTH, display_height_px: HEIGHT }];
  return JSON.stringify({ model: MODEL, max_tokens: 64, stream, system: "You operate a desktop.", tools, messages });
}

/** A POST of `body` to the emulated (or proxied) Anthropic Messages API, as the proxy benches send it. */
export const post =
  (url: string, body: string, headers: Record<string, string> = {}) =>
  () =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "bench-key",
        "anthropic-version": "2023-06-01",
        ...headers,
      },
      body,
    });

export const send = (url: string, body: string, session: string): Promise<Response> =>
  post(url, body, { "x-session-id": session })();
