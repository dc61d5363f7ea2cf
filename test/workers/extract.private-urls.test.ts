/**
 * `security.allow_private_urls` and what it opens (issue 42, item 8), through web_extract in
 * workerd with the emulated DNS-over-HTTPS resolver: a router's `*.local` name answering
 * 192.168.1.1 and a name answering a benchmarking address (198.18.23.183) are fetched, as is that
 * address itself; a local name answering a metadata or link-local address stays refused (the floor
 * holds whatever the name). Without the setting, all of them are refused and the provider is never
 * called. A Telegram bot token in a URL's path is a 422 before any of that.
 */
import { describe, expect, it } from "vitest";
import { callJson, EMULATOR, providerCalls, uniqueToken } from "./helpers";

const OPEN = { SECURITY_ALLOW_PRIVATE_URLS: "true" };

const extract = (urls: string[], vars: Record<string, unknown> = {}) =>
  callJson("/v1/web_extract", { body: { urls }, vars });

const answer = (name: string, address: string) =>
  fetch(`${EMULATOR}/__dns`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, A: [address] }),
  });

/** A router's `.local` name answering 192.168.1.1 and a name answering a benchmarking address, unique to this test. */
async function routerAndBench(): Promise<{ token: string; router: string; bench: string }> {
  const token = uniqueToken();
  const router = `router-${token}.local`;
  const bench = `bench-${token}.example.com`;
  await answer(router, "192.168.1.1");
  await answer(bench, "198.18.23.183");
  return { token, router, bench };
}

describe("with private URLs allowed", () => {
  it("fetches a router's .local name, a name answering a benchmarking address, and that address", async () => {
    const { token, router, bench } = await routerAndBench();
    const urls = [`http://${router}/status`, `http://${bench}/page`, `http://198.18.23.183/${token}`];
    const { status, body } = await extract(urls, OPEN);
    expect(status).toBe(200);
    expect(
      body.results.map((result: any) => result.error?.code ?? "fetched"),
      JSON.stringify(body),
    ).toEqual(["fetched", "fetched", "fetched"]);
    for (const url of urls) expect(await providerCalls("tavily", url), url).toBe(1);
  });

  it("keeps a local name answering a metadata or link-local address refused", async () => {
    const token = uniqueToken();
    const metadata = `meta-${token}.local`;
    const linkLocal = `link-${token}.internal`;
    await answer(metadata, "169.254.169.254");
    await answer(linkLocal, "169.254.10.10");
    const { body } = await extract([`http://${metadata}/latest/`, `http://${linkLocal}/`], OPEN);
    expect(body.results.map((result: any) => result.error?.code)).toEqual([
      "blocked_private_address",
      "blocked_private_address",
    ]);
    expect(body.results[0].error.message).toContain("169.254.169.254");
    expect(body.results[1].error.message).toContain("link-local");
    expect(await providerCalls("tavily", token)).toBe(0);
  });
});

describe("without it", () => {
  it("refuses the .local name without a lookup, and the benchmarking name and address", async () => {
    const { token, router, bench } = await routerAndBench();
    const { body } = await extract([`http://${router}/`, `http://${bench}/`, `http://198.18.23.183/${token}`]);
    expect(body.results.map((result: any) => result.error?.code)).toEqual([
      "blocked_private_address",
      "blocked_private_address",
      "blocked_private_address",
    ]);
    expect(body.results[0].error.message).toContain("local network name");
    expect(await providerCalls("tavily", token)).toBe(0);
  });
});

describe("a Telegram bot token in the path", () => {
  it("is a 422 secret_in_url, whatever private URLs allow, and nothing is fetched", async () => {
    const token = uniqueToken();
    const secret = ["ABC", "DEF1234ghIkl", "zyx57W2v1u123ew11"].join("-");
    const { status, body } = await extract([`https://api.telegram.org/bot123456:${secret}/getMe?${token}`], OPEN);
    expect(status).toBe(422);
    expect(body.error.code).toBe("secret_in_url");
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(await providerCalls("tavily", token)).toBe(0);
  });
});
