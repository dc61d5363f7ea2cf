/**
 * The hosted extract adapters against the loopback emulator with a real fetch: mapping, the
 * text format, keys, and the failures a client would see.
 */
import { appErrorOf } from "../support/app-error";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractAdapters } from "../../shared/web/providers/providers.catalog";
import type { ProviderSettings } from "../../shared/web/providers/provider.types";
import { EMULATOR_API_KEY, type EmulatorCall, type RunningEmulator, startEmulator } from "../emulator/server";
import { emulatorCallList, openGate, uniqueToken } from "../support/emulator-client";

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});

type Name = keyof typeof extractAdapters;
const NAMES = Object.keys(extractAdapters) as Name[];

function settings(name: Name, overrides: Partial<ProviderSettings> = {}): ProviderSettings {
  return { name, baseUrl: `${emulator.url}/${name}`, apiKey: EMULATOR_API_KEY, timeoutMs: 5000, ...overrides };
}

const token = () => uniqueToken("ext");

const callsFor = (provider: string, contains: string): Promise<EmulatorCall[]> =>
  emulatorCallList(emulator.url, provider, contains);

describe.each(NAMES)("%s extract adapter", (name) => {
  const extract = (url: string, format: "markdown" | "text" = "markdown", overrides: Partial<ProviderSettings> = {}) =>
    extractAdapters[name](settings(name, overrides), { url, format }, globalThis.fetch);

  it("returns the page as markdown with its title", async () => {
    const url = `https://docs.example.com/${token()}/guide?x=1`;
    const page = await extract(url);
    expect(page.url).toBe(url);
    expect(page.title).toBe(`Page at ${url}`);
    expect(page.content).toContain(`# Page at ${url}`);
    expect(page.content).toContain("**extracted**");
    expect(page.content).toContain(`[the page](${url})`);
    expect(page.final_url).toMatch(/^https:\/\/docs\.example\.com\//);
  });

  it("returns plain text for format text", async () => {
    const url = `https://docs.example.com/${token()}`;
    const page = await extract(url, "text");
    expect(page.content.startsWith(`Page at ${url}`)).toBe(true);
    expect(page.content).toContain("This is the extracted content of the page.");
    expect(page.content).not.toMatch(/\*\*|\]\(|^#/m);
  });

  it("sends the key and records one call per page", async () => {
    const tok = token();
    await extract(`https://docs.example.com/${tok}/[auth]`);
    const calls = await callsFor(name, tok);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ has_key: true, key_ok: true });
  });

  it("returns empty content for an empty page", async () => {
    const page = await extract(`https://docs.example.com/${token()}/[empty]`);
    expect(page.content).toBe("");
  });

  it("maps an upstream 503 to a 502 naming the provider, without body or key", async () => {
    const error = await appErrorOf(extract(`https://docs.example.com/${token()}/[fail:503]`));
    expect(error.status).toBe(502);
    expect(error.message).toContain(name);
    expect(error.message).toContain("HTTP 503");
    const sent = JSON.stringify(error.toBody());
    expect(sent).not.toContain("upstream-body-detail");
    expect(sent).not.toContain(EMULATOR_API_KEY);
  });

  it("maps a page the provider could not read to a 502", async () => {
    const error = await appErrorOf(extract(`https://docs.example.com/${token()}/[failed]`));
    expect(error.status).toBe(502);
    expect(error.code).toBe("provider_error");
    expect(error.message).toContain(name);
  });

  it("maps a non-JSON answer to a 502 and one that never comes to a 504 at the timeout", async () => {
    expect((await appErrorOf(extract(`https://docs.example.com/${token()}/[badjson]`))).status).toBe(502);
    // The provider holds its answer until after the call: only the 200 ms timeout can end it.
    const held = token();
    const slow = await appErrorOf(
      extract(`https://docs.example.com/${held}/[gate:${held}]`, "markdown", { timeoutMs: 200 }),
    );
    await openGate(emulator.url, held);
    expect(slow.status).toBe(504);
    expect(slow.message).toContain(name);
  });

  it("names a rejected key without repeating it", async () => {
    const wrongKey = "wrong-extract-key-77aa";
    const error = await appErrorOf(
      extract(`https://docs.example.com/${token()}/[auth]`, "markdown", { apiKey: wrongKey }),
    );
    expect(error.message).toContain("rejected the configured API key");
    expect(JSON.stringify(error.toBody())).not.toContain(wrongKey);
  });
});

describe("jina without a key", () => {
  it("sends no authorization header when no key is configured", async () => {
    const tok = token();
    const page = await extractAdapters.jina(
      settings("jina", { apiKey: undefined }),
      { url: `https://a.example/${tok}`, format: "markdown" },
      globalThis.fetch,
    );
    expect(page.title).toBe(`Page at https://a.example/${tok}`);
    expect((await callsFor("jina", tok))[0]!.has_key).toBe(false);
  });
});

describe("firecrawl final URL", () => {
  it("reports where the scrape ended up", async () => {
    const url = `https://a.example/${token()}`;
    const page = await extractAdapters.firecrawl(settings("firecrawl"), { url, format: "markdown" }, globalThis.fetch);
    expect(page.final_url).toBe(`${url}?final=1`);
  });
});
