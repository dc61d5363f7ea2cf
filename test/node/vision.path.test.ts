/** docs/vision.md, "Two paths": which callers get the image natively, and in which block style. */
import { describe, expect, it } from "vitest";
import { choosePath, contentBlocks } from "../../shared/vision/vision.path";

describe("choosePath", () => {
  it.each([
    [{ provider: "anthropic", name: "claude-sonnet-4-5" }, "native", "anthropic"],
    [{ provider: "openai", name: "gpt-4.1" }, "native", "openai"],
    [{ provider: "azure", name: "gpt-4o" }, "native", "openai"],
    [{ provider: "gemini", name: "gemini-3-pro" }, "native", "gemini"],
    [{ provider: "openrouter", name: "anthropic/claude-sonnet-4.5" }, "native", "openai"],
    [{ provider: "openrouter", name: "google/gemini-3-flash" }, "native", "openai"],
    [{ provider: "bedrock", name: "anthropic.claude-opus-4-1" }, "native", "anthropic"],
    [{ provider: "vertex", name: "claude-sonnet-4-5@20250929" }, "native", "anthropic"],
    [{ provider: "gemini", name: "gemini-2.5-flash" }, "descriptor", "gemini"],
    [{ provider: "openai", name: "gpt-3.5-turbo" }, "descriptor", "openai"],
    [{ provider: "openrouter", name: "deepseek/deepseek-chat" }, "descriptor", "openai"],
    [{ provider: "mistral", name: "mistral-large" }, "descriptor", "openai"],
    // Names of an object's own machinery are no provider (the table is not read through a prototype).
    [{ provider: "constructor", name: "gpt-4o" }, "descriptor", "openai"],
    [{ provider: "toString", name: "x" }, "descriptor", "openai"],
    [{ provider: "__proto__", name: "x" }, "descriptor", "openai"],
  ])("%j → %s (%s blocks)", (model, path, style) => {
    expect(choosePath(model)).toEqual({ path, style });
  });

  it("treats a caller that names no model as native", () => {
    expect(choosePath(undefined).path).toBe("native");
  });
});

describe("contentBlocks", () => {
  it("shapes the image for each provider", () => {
    expect(contentBlocks("anthropic", "image/jpeg", "QUJD", "n")[0]).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/jpeg", data: "QUJD" },
    });
    expect(contentBlocks("openai", "image/jpeg", "QUJD", "n")[0]).toEqual({
      type: "image_url",
      image_url: { url: "data:image/jpeg;base64,QUJD" },
    });
    expect(contentBlocks("gemini", "image/jpeg", "QUJD", "n")[0]).toEqual({
      inline_data: { mime_type: "image/jpeg", data: "QUJD" },
    });
  });
});
