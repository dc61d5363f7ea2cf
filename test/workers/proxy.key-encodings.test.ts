/**
 * The operator's key comes back in no encoding (docs/proxy.md, "Credentials"): an upstream that
 * echoes it in base64 (standard or url-safe, starting anywhere in the encoded bytes, as a `Basic`
 * credential or a token's payload) or percent-encoded has it taken out of the answer's header and
 * body, a stream cut in the middle of the key included. Through the real Workers entry and the
 * LLM emulator's `[leak:FORM]`.
 */
import { describe, expect, it } from "vitest";
import { postJson, uniqueToken } from "./helpers";

/** Keys whose base64 holds `+` and `/` at every offset, so the url-safe alphabet differs. */
const OPERATOR = {
  ANTHROPIC_API_KEY: "sk-ant-api03-???>>>operator0Secret~~~Key0For0Tests-Wq9Z",
  OPENAI_API_KEY: "sk-proj-???>>>operator0Secret~~~Key0For0Tests0Xy7K",
  API_TOKENS: "svc-token-1",
};

/** The emulator's echo forms: base64 at offset 0, `Basic` (offset 1), a token's url-safe payload (offset 2), `%XX`. */
const FORMS = ["base64", "basic", "jwt", "percent"] as const;

/** Every run of base64 characters in `text`, decoded from each of its first 4 characters, in either alphabet. */
function base64Decodings(text: string): string[] {
  const decoded: string[] = [];
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    const standard = run.replaceAll("-", "+").replaceAll("_", "/");
    for (let from = 0; from < 4; from++) {
      const part = standard.slice(from, from + Math.floor((standard.length - from) / 4) * 4);
      try {
        decoded.push(atob(part));
      } catch {
        // Not base64 from here.
      }
    }
  }
  return decoded;
}

/** Fails if any 8 characters of `key` in a row can be read from `text`: as they are, percent-decoded or base64-decoded. */
function expectNoKey(text: string, key: string) {
  let percentDecoded = text;
  try {
    percentDecoded = decodeURIComponent(text);
  } catch {
    // A lone `%` elsewhere: the text as it is.
  }
  const readings = [text, percentDecoded, ...base64Decodings(text)];
  for (let at = 0; at + 8 <= key.length; at++)
    for (const reading of readings)
      expect(reading, `key characters ${at}–${at + 8}`).not.toContain(key.slice(at, at + 8));
}

const ask = (form: string, options: { stream?: boolean; openai?: boolean } = {}) => {
  const marker = `[leak:${form}] ${uniqueToken()}`;
  return options.openai
    ? postJson(
        "/openai/v1/chat/completions",
        { model: "gpt-4o", stream: options.stream === true, messages: [{ role: "user", content: marker }] },
        { authorization: "Bearer svc-token-1" },
        OPERATOR,
      )
    : postJson(
        "/anthropic/v1/messages",
        {
          model: "claude-sonnet-4-5",
          max_tokens: 64,
          stream: options.stream === true,
          messages: [{ role: "user", content: marker }],
        },
        { "x-api-key": "svc-token-1" },
        OPERATOR,
      );
};

describe("operator's key: it never comes back encoded", () => {
  it.each(FORMS)("takes the key out of a 200 answer's header and body: %s", async (form) => {
    const response = await ask(form);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("[redacted]");
    expectNoKey(text, OPERATOR.ANTHROPIC_API_KEY);
    const header = response.headers.get("x-echo-key") ?? "";
    expect(header).toContain("[redacted]");
    expectNoKey(header, OPERATOR.ANTHROPIC_API_KEY);
  });

  it.each(FORMS)("takes it out of a stream, the encoded key cut across two chunks: %s", async (form) => {
    const response = await ask(form, { stream: true, openai: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("[redacted]");
    expect(text).toContain("last event");
    expectNoKey(text, OPERATOR.OPENAI_API_KEY);
    expectNoKey(response.headers.get("x-echo-key") ?? "", OPERATOR.OPENAI_API_KEY);
  });
});
