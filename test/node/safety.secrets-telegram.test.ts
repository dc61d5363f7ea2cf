/**
 * Telegram bot tokens in a URL path (issue 42, item 8): the Bot API's `bot<id>:<secret>` is refused
 * whatever the secret's length between 30 and 50 when it holds a key-like run (Telegram's own
 * documentation shows a 34-character one), and ordinary paths (slugs, times, `Category:` pages,
 * `robot` words, bot ids with a lower-case slug) are never taken for one: a property over generated
 * paths (those holding a real token's shape, digits, a colon and exactly 35 token characters,
 * left aside).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findSecretInUrl } from "../../shared/safety/secrets";

// Built from parts so no scanner mistakes this test file for a leaked credential.
const DOCS_SECRET = ["ABC", "DEF1234ghIkl", "zyx57W2v1u123ew11"].join("-");
const mixed = (n: number) =>
  Array.from({ length: n }, (_, i) => "aB3xK9mQ2pL7vN4tR8sW1zY6cD5fG0hJ"[(i * 7 + 3) % 32]).join("");

describe("a Telegram bot token in a URL path", () => {
  it.each([
    ["Telegram's documented example", `https://api.telegram.org/bot123456:${DOCS_SECRET}/getMe`],
    ["a 30-character secret", `https://api.telegram.org/bot7012345678:${mixed(30)}/getUpdates`],
    ["a 50-character secret", `https://api.telegram.org/bot7012345678:${mixed(50)}/sendMessage`],
    ["a file download", `https://api.telegram.org/file/bot123456:${DOCS_SECRET}/photos/file_1.jpg`],
    ["a percent-encoded colon", `https://relay.example.com/bot123456%3A${DOCS_SECRET}/getMe`],
    ["upper-case BOT", `https://example.com/BOT123456:${DOCS_SECRET}`],
    ["a 35-character secret after a separator", `https://example.com/hook/123456789:${mixed(35)}`],
  ])("refuses %s", (_, url) => {
    expect(findSecretInUrl(url)?.kind).toBe("Telegram bot token");
  });

  it.each([
    ["a slug after a bot id", "https://example.com/bot123456:the-best-robot-vacuums-of-2024-reviewed"],
    ["a short secret", `https://api.telegram.org/bot123456:${mixed(29)}/getMe`],
    ["a long secret", `https://api.telegram.org/bot123456:${mixed(51)}/getMe`],
    ["a 34-character secret without bot", `https://example.com/hook/123456:${DOCS_SECRET}`],
    ["a time", "https://example.com/bot/12:30:45/logs"],
    ["a wiki category", "https://en.wikipedia.org/wiki/Category:Chatbots_and_robots_of_the_2020s_decade"],
    ["robot words", "https://example.com/robot2000:the-best-robot-vacuum-cleaners-of-2024"],
  ])("lets %s through", (_, url) => {
    expect(findSecretInUrl(url)).toBeNull();
  });

  it("never refuses an ordinary path (property)", () => {
    const words = fc.constantFrom(
      "bot",
      "robot",
      "chatbot",
      "bots",
      "news",
      "Category",
      "wiki",
      "api",
      "v1",
      "getMe",
      "sendMessage",
      "updates",
      "the",
      "best",
      "of",
      "Telegram",
      "Help",
      "FAQ",
    );
    const number = fc.integer({ min: 0, max: 99_999_999_999 }).map(String);
    const slug = fc.array(fc.oneof(words, number), { minLength: 1, maxLength: 12 }).map((parts) => parts.join("-"));
    const segment = fc.oneof(
      slug,
      fc.tuple(words, number).map(([w, n]) => `${w}${n}`),
      fc.tuple(words, number, slug).map(([w, n, s]) => `${w}${n}:${s}`),
      fc.tuple(number, number, number).map(([h, m, s]) => `${h}:${m}:${s}`),
      fc.tuple(words, slug).map(([w, s]) => `${w}:${s}`),
    );
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (segments) => {
        const url = `https://example.com/${segments.join("/")}`;
        // Digits, a colon and exactly 35 token characters is a real token's shape (refused before
        // this change, whatever the characters): not an ordinary path.
        fc.pre(!/\d{5,16}:[\w-]{35}(?![\w-])/.test(url));
        expect(findSecretInUrl(url), url).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });
});
