/**
 * `security.allow_private_urls` and what it opens (issue 42, item 8), on the Deno entry over real
 * HTTP, the counterpart of test/workers/extract.private-urls.test.ts. Names are answered by the
 * emulator's DNS-over-HTTPS (the gate's resolver) and its plain DNS (`DENO_DNS_SERVER`, the
 * resolver Deno's pinned fetch connects by).
 *
 * Nothing here sends a packet past loopback:
 * - through the emulated Tavily, the service only judges each URL and hands it on (the emulator
 *   never fetches it): a router's `*.local` name answering 192.168.1.1, a name answering the
 *   benchmarking address 198.18.23.183 and that address itself are handed on with the setting, a
 *   local name answering the metadata or a link-local address is refused, and without the setting
 *   all three are refused and Tavily is never called;
 * - through the direct provider, Deno fetches the page itself: the router's and the benchmarking
 *   name pass the gate on their DoH answers, and the runtime's resolver sends both to a site on
 *   127.0.0.1, which serves them under their own names.
 */
import { Resolver } from "node:dns/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars, startEmulator } from "../emulator/server";
import { type DenoService, startDeno } from "../support/deno-service";
import { emulatorCalls, postJson, uniqueToken } from "../support/emulator-client";
import { LOOPBACK_SITE_TEXT, type LoopbackSite, startLoopbackSite } from "../support/loopback-site";

let emulator: Awaited<ReturnType<typeof startEmulator>>;
let strict: DenoService;
let open: DenoService;
let direct: DenoService;
let site: LoopbackSite;

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startLoopbackSite();
  const env = (allowPrivate: boolean, provider: "tavily" | "direct") => ({
    ...emulatorVars(emulator.url),
    DENO_KV_PATH: ":memory:",
    DENO_DNS_SERVER: `127.0.0.1:${emulator.dnsPort}`,
    WEB_EXTRACT_PROVIDER: provider,
    SECURITY_ALLOW_ANONYMOUS: "true",
    SECURITY_ALLOW_PRIVATE_URLS: String(allowPrivate),
  });
  [strict, open, direct] = await Promise.all([
    startDeno({ env: env(false, "tavily") }),
    startDeno({ env: env(true, "tavily") }),
    startDeno({ env: env(true, "direct") }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([strict?.stop(), open?.stop(), direct?.stop()]);
  site?.close();
  await emulator?.close();
});

/** `name` answers `address` over DoH, and (when given) `plain` on the runtime's resolver. */
async function answer(name: string, address: string, plain?: string): Promise<void> {
  const response = await postJson(`${emulator.url}/__dns`, {
    name,
    A: [address],
    ...(plain ? { plain: { A: [plain] } } : {}),
  });
  expect(response.ok).toBe(true);
  await response.arrayBuffer();
}

/** A router's `.local` name answering 192.168.1.1 and a name answering a benchmarking address, unique to this test. */
async function routerAndBench(plain?: string): Promise<{ token: string; router: string; bench: string }> {
  const token = uniqueToken();
  const router = `router-${token}.local`;
  const bench = `bench-${token}.example.com`;
  await answer(router, "192.168.1.1", plain);
  await answer(bench, "198.18.23.183", plain);
  return { token, router, bench };
}

interface ExtractResult {
  url: string;
  content?: string;
  error?: { code: string; message: string };
}

async function extract(service: DenoService, urls: string[]): Promise<{ status: number; results: ExtractResult[] }> {
  const response = await postJson(`${service.url}/v1/web_extract`, { urls });
  const body = (await response.json()) as { results: ExtractResult[] };
  return { status: response.status, results: body.results };
}

const verdicts = (results: ExtractResult[]) => results.map((result) => result.error?.code ?? "fetched");

describe("on Deno, with private URLs allowed", () => {
  it("hands on a router's .local name, a name answering a benchmarking address, and that address", async () => {
    const { token, router, bench } = await routerAndBench();
    const urls = [`http://${router}/status`, `http://${bench}/page`, `http://198.18.23.183/${token}`];
    const { status, results } = await extract(open, urls);
    expect(status).toBe(200);
    expect(verdicts(results), JSON.stringify(results)).toEqual(["fetched", "fetched", "fetched"]);
    for (const url of urls) expect(await emulatorCalls(emulator.url, "tavily", url), url).toBe(1);
  });

  it("keeps a local name answering a metadata or link-local address refused", async () => {
    const token = uniqueToken();
    const metadata = `meta-${token}.local`;
    const linkLocal = `link-${token}.internal`;
    await answer(metadata, "169.254.169.254");
    await answer(linkLocal, "169.254.10.10");
    const { results } = await extract(open, [`http://${metadata}/latest/`, `http://${linkLocal}/`]);
    expect(verdicts(results)).toEqual(["blocked_private_address", "blocked_private_address"]);
    expect(results[0]!.error!.message).toContain("169.254.169.254");
    expect(results[1]!.error!.message).toContain("link-local");
    expect(await emulatorCalls(emulator.url, "tavily", token)).toBe(0);
  });

  it("fetches the router's and the benchmarking name itself (direct) from the address its resolver gives, loopback here", async () => {
    const { router, bench } = await routerAndBench("127.0.0.1");
    // Before Deno connects anywhere: the runtime's resolver sends both names to loopback only.
    const runtimeDns = new Resolver();
    runtimeDns.setServers([`127.0.0.1:${emulator.dnsPort}`]);
    for (const name of [router, bench]) expect(await runtimeDns.resolve4(name), name).toEqual(["127.0.0.1"]);
    const before = site.hosts.length;
    const { results } = await extract(direct, [
      `http://${router}:${site.port}/status`,
      `http://${bench}:${site.port}/page`,
    ]);
    expect(verdicts(results), JSON.stringify(results)).toEqual(["fetched", "fetched"]);
    for (const result of results) expect(result.content).toContain(LOOPBACK_SITE_TEXT);
    expect(site.hosts.slice(before).sort()).toEqual([`${bench}:${site.port}`, `${router}:${site.port}`].sort());
  });
});

describe("on Deno, without it", () => {
  it("refuses the .local name without a lookup, and the benchmarking name and address; Tavily is never called", async () => {
    const { token, router, bench } = await routerAndBench();
    const { results } = await extract(strict, [
      `http://${router}/`,
      `http://${bench}/`,
      `http://198.18.23.183/${token}`,
    ]);
    expect(verdicts(results)).toEqual([
      "blocked_private_address",
      "blocked_private_address",
      "blocked_private_address",
    ]);
    expect(results[0]!.error!.message).toContain("local network name");
    expect(await emulatorCalls(emulator.url, "tavily", token)).toBe(0);
  });
});
