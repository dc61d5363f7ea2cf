/**
 * The dashboard in a real headless Chromium (Debian's, driven by puppeteer-core) against the real
 * Deno service and the loopback emulator: after a scripted run of searches, extracts and LLM
 * calls through the provider proxy, the page asks for the token, shows the totals /v1/stats reports, draws its charts
 * (non-blank pixels), sends no request off its origin and logs no console error. The screenshot
 * is kept in test-output/dashboard.png.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser } from "puppeteer-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars } from "../../scripts/local-stack";
import { CONFIG_PLACES, loadConfig } from "../../shared/config/config.load";
import { type RunningEmulator, startEmulator } from "../emulator/server";
import { encodePng, photoPixels } from "../fixtures/images";
import { launchChromium } from "../support/chromium";
import { type DenoService, denoFlightJoiners, startDeno } from "../support/deno-service";
import { answeredTogether } from "../support/emulator-client";
import { searchFlightKey } from "../support/flight-keys";

const ROOT = resolve(import.meta.dirname, "../..");
const TOKEN = "dashboard-test-token-1";
const OUT = join(ROOT, "test-output");

let emulator: RunningEmulator;
let deno: DenoService;
let browser: Browser;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "dashboard-test-"));
  const kvPath = join(work, "kv.sqlite3");
  emulator = await startEmulator();
  deno = await startDeno({
    env: { ...emulatorVars(emulator.url), DENO_KV_PATH: kvPath, API_TOKENS: TOKEN, SECURITY_ALLOW_ANONYMOUS: "false" },
    flightProbe: true,
  });
  browser = await launchChromium(work);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await deno?.stop();
  await emulator?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const post = (path: string, body: unknown) =>
  fetch(`${deno.url}${path}`, { method: "POST", headers: auth, body: JSON.stringify(body) });
/** An Anthropic call through the proxy, the caller's own key upstream and the service token beside it. */
const proxied = (body: unknown) =>
  fetch(`${deno.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "sk-ant-dashboard", "x-service-token": TOKEN },
    body: JSON.stringify(body),
  });
/** The dashboard's byte format. */
const formatBytes = (n: number): string =>
  n < 0
    ? `\u2212${formatBytes(-n)}`
    : n >= 1048576
      ? `${(n / 1048576).toFixed(1)} MiB`
      : n >= 1024
        ? `${(n / 1024).toFixed(1)} KiB`
        : `${Math.round(n)} B`;
const readStats = async (window = "24h") =>
  (await (await fetch(`${deno.url}/v1/stats?window=${window}`, { headers: auth })).json()) as any;

/** Pixels of a PNG that are not the page's white or near-white background. */
async function inkedPixels(png: Uint8Array): Promise<number> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  let inked = 0;
  for (let i = 0; i < data.length; i += info.channels)
    if (data[i]! < 200 || data[i + 1]! < 200 || data[i + 2]! < 200) inked++;
  return inked;
}

describe("GET /dashboard in headless Chromium", () => {
  it("asks for the token, then shows /v1/stats' totals and draws every chart, all from its own origin", async () => {
    // The scripted run: 8 identical concurrent searches (the provider holds its answer until the
    // other 7 joined the one paying), 3 more later (hits), extracts paid and hit.
    const gate = `dashboard-${Date.now()}`;
    const q = `dashboard run [gate:${gate}] ${gate}`;
    const key = await searchFlightKey(loadConfig(emulatorVars(emulator.url), CONFIG_PLACES.deno), q);
    const searches = await answeredTogether(
      emulator.url,
      { gate, paying: 1, joiners: 7, count: () => denoFlightJoiners([deno], key) },
      Array.from({ length: 8 }, () => post("/v1/web_search", { query: q })),
    );
    expect(searches.map((r) => r.status)).toEqual(Array(8).fill(200));
    for (let i = 0; i < 3; i++) expect((await post("/v1/web_search", { query: q })).status).toBe(200);
    const url = `https://docs.example.com/dashboard-${Date.now()}/guide`;
    for (let i = 0; i < 3; i++) expect((await post("/v1/web_extract", { urls: [url] })).status).toBe(200);
    // Three LLM calls through the proxy: a cache write, a read of it, and one with a tool photo
    // far over the embed budget (fitted on the way: bytes saved).
    const system = [
      {
        type: "text",
        text: `dashboard agent ${"A long system prompt. ".repeat(400)}`,
        cache_control: { type: "ephemeral" },
      },
    ];
    const ask = { model: "claude-sonnet-4-5", max_tokens: 64, system, messages: [{ role: "user", content: "hello" }] };
    let outputTokens = 0;
    const answered = async (response: Response) => {
      expect(response.status).toBe(200);
      outputTokens += ((await response.json()) as { usage: { output_tokens: number } }).usage.output_tokens;
      return response;
    };
    for (let i = 0; i < 2; i++) await answered(await proxied(ask));
    const photo = Buffer.from(await encodePng(photoPixels(1600, 1000, 5), 1600, 1000, 3)).toString("base64");
    const withPhoto = {
      ...ask,
      messages: [
        { role: "user", content: "look" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: photo } }],
            },
          ],
        },
      ],
    };
    const fitted = await answered(await proxied(withPhoto));
    expect(fitted.headers.get("x-edge-fitted")).toBe("1");
    // The answers' usage is written after they end: wait until the flush has taken all three.
    let stats = await readStats();
    const flushed = () => stats.totals.web_extract.requests >= 3 && stats.totals.llm.output_tokens >= outputTokens;
    for (let i = 0; i < 100 && !flushed(); i++) {
      await new Promise((r) => setTimeout(r, 100));
      stats = await readStats();
    }
    expect(stats.totals.web_search).toMatchObject({ requests: 11, provider_calls: 1, hits: 3, coalesced: 7 });
    expect(stats.totals.web_extract).toMatchObject({ requests: 3, provider_calls: 1, hits: 2 });
    expect(stats.totals.llm).toMatchObject({ requests: 3, images_fitted: 1, errors: 0, output_tokens: outputTokens });
    expect(stats.totals.llm.cache_read_tokens).toBeGreaterThan(0);
    expect(stats.totals.llm.cache_write_tokens).toBeGreaterThan(0);
    expect(stats.totals.llm.bytes_saved).toBeGreaterThan(1024 * 1024);
    expect(stats.totals.llm.bytes_saved).toBe(Number(fitted.headers.get("x-edge-bytes-saved")));
    expect(stats.saved_usd).toBeGreaterThan(0);

    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 1100 });
    const requests: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => void requests.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => void problems.push(String(error)));

    await page.goto(`${deno.url}/dashboard`, { waitUntil: "networkidle0" });
    // API_TOKENS is set: nothing is shown until the token is given, and it is kept for the tab only.
    expect(await page.$eval("#login", (el) => (el as HTMLElement).hidden)).toBe(false);
    expect(await page.$eval("#board", (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(requests.filter((u) => u.includes("/v1/"))).toEqual([]);
    await page.type("#token", TOKEN);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("body[data-loaded='24h']", { timeout: 10_000 });
    expect(await page.evaluate(() => [sessionStorage.getItem("edge-tools-token"), localStorage.length])).toEqual([
      TOKEN,
      0,
    ]);

    const text = (id: string) => page.$eval(`#${id}`, (el) => el.textContent ?? "");
    const t = stats.totals;
    expect(await text("search-paid")).toBe(String(t.web_search.provider_calls));
    expect(await text("search-avoided")).toBe(String(t.web_search.hits + t.web_search.coalesced));
    expect(await text("extract-paid")).toBe(String(t.web_extract.provider_calls));
    expect(await text("extract-avoided")).toBe(String(t.web_extract.hits + t.web_extract.coalesced));
    expect(Number((await text("saved-usd")).replace("$", ""))).toBeCloseTo(stats.saved_usd, 3);
    const share = t.llm.cache_read_tokens / (t.llm.input_tokens + t.llm.cache_write_tokens + t.llm.cache_read_tokens);
    expect(await text("llm-read-share")).toBe(`${(share * 100).toFixed(1)}%`);
    // Vision's image bytes as the base64 they travel in, beside the proxy's request bytes.
    expect(await text("image-bytes-saved")).toBe(
      formatBytes(Math.round(((t.vision.bytes_in - t.vision.bytes_out) * 4) / 3) + t.llm.bytes_saved),
    );

    for (const id of ["chart-saved", "chart-search", "chart-extract", "chart-llm", "chart-images"]) {
      const shot = await (await page.$(`#${id}`))!.screenshot();
      // Axis labels alone ink a few hundred pixels; bars and lines many more.
      expect(await inkedPixels(shot), id).toBeGreaterThan(600);
      expect(await page.$$eval(`#${id} rect, #${id} path`, (els) => els.length), id).toBeGreaterThan(0);
    }

    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: join(OUT, "dashboard.png"), fullPage: true });

    // The window chooser asks again for 7 days.
    await page.click("button[data-window='7d']");
    await page.waitForSelector("body[data-loaded='7d']", { timeout: 10_000 });
    expect(await text("search-paid")).toBe(String((await readStats("7d")).totals.web_search.provider_calls));

    const origin = new URL(deno.url).origin;
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(requests.some((u) => u.includes("/v1/stats?window=7d"))).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows a negative saving with its sign, hangs that hour's bar below zero, labels every gridline, and repeats no axis label on an empty chart", async () => {
    // The window as /v1/stats answers it, with the LLM's cache writes costing more than their reads
    // saved in one hour (a negative saving) and a positive one in the next.
    const real = await readStats("24h");
    const from = Date.parse(real.from);
    const at = (h: number) => new Date(from + h * 3_600_000).toISOString();
    const llm = (saved: number) => ({
      requests: 1,
      input_tokens: 10,
      cache_write_tokens: 5000,
      cache_read_tokens: 0,
      saved_usd: saved,
    });
    const crafted = {
      ...real,
      saved_usd: -3,
      totals: {
        ...real.totals,
        // A vision fit that came out 3,000 bytes larger (4,000 of base64), and 1,000 request bytes the proxy saved.
        vision: { ...real.totals.vision, bytes_in: 3_000, bytes_out: 6_000 },
        // As sent is reported: the LLM's saved_usd is the service's own (as sent − billed).
        llm: { ...real.totals.llm, bytes_saved: 1_000, cost_as_sent_usd: 0 },
        web_search: { ...real.totals.web_search, provider_calls: 0, hits: 0, coalesced: 0, saved_usd: 0 },
        web_extract: { ...real.totals.web_extract, provider_calls: 0, hits: 0, coalesced: 0, saved_usd: 0 },
      },
      series: [
        { t: at(2), llm: llm(-5) },
        { t: at(3), llm: llm(2) },
      ],
    };
    const page = await browser.newPage();
    await page.goto(`${deno.url}/dashboard`, { waitUntil: "networkidle0" });
    await page.evaluate((token) => sessionStorage.setItem("edge-tools-token", token), TOKEN);
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      if (request.url().includes("/v1/stats?"))
        void request.respond({ status: 200, contentType: "application/json", body: JSON.stringify(crafted) });
      else void request.continue();
    });
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector("body[data-loaded='24h']", { timeout: 10_000 });
    expect(await page.$eval("#saved-usd", (el) => el.textContent)).toBe("\u2212$3.00");
    expect(await page.$eval("#image-bytes-saved", (el) => el.textContent)).toBe("\u22122.9 KiB");
    const chart = await page.$eval("#chart-saved", (svg) => ({
      bars: [...svg.querySelectorAll("rect")].map((r) => ({
        top: Number(r.getAttribute("y")),
        bottom: Number(r.getAttribute("y")) + Number(r.getAttribute("height")),
      })),
      ticks: [...svg.querySelectorAll("text.tick")].map((t) => ({
        label: t.textContent,
        y: Number(t.getAttribute("y")) - 3,
      })),
    }));
    expect(chart.bars).toHaveLength(2);
    // Every gridline labelled, in whole dollars here: -5 and 2 fall between -6 and 2.
    expect(chart.ticks.map((t) => t.label)).toEqual(["\u2212$6.00", "\u2212$4.00", "\u2212$2.00", "$0.00", "$2.00"]);
    const zero = chart.ticks.find((t) => t.label === "$0.00")!.y;
    const perDollar = (zero - chart.ticks.find((t) => t.label === "$2.00")!.y) / 2;
    const [below, above] = chart.bars as [{ top: number; bottom: number }, { top: number; bottom: number }];
    expect(below.top).toBeCloseTo(zero, 6);
    expect((below.bottom - zero) / perDollar).toBeCloseTo(5, 6);
    expect(above.bottom).toBeCloseTo(zero, 6);
    expect((zero - above.top) / perDollar).toBeCloseTo(2, 6);
    // The search chart has nothing to draw: its axis reads 0 and 1 once each, not "0, 1, 1".
    const searchLabels = await page.$eval("#chart-search", (svg) =>
      [...svg.querySelectorAll("text")].map((t) => t.textContent).filter((t) => !t?.includes(":") && !t?.includes("/")),
    );
    expect(searchLabels).toEqual(["0", "1"]);
    await page.close();
  }, 60_000);

  it("shows the window chosen last when an earlier answer comes late, and says so when /v1/stats cannot be read", async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => void problems.push(String(error)));
    await page.goto(`${deno.url}/dashboard`, { waitUntil: "networkidle0" });
    await page.evaluate((token) => sessionStorage.setItem("edge-tools-token", token), TOKEN);
    // Which /v1/stats answers the page has read (its fetch's text() resolved): the page acts on an
    // answer in the microtasks right after, so by the next task it has.
    await page.evaluateOnNewDocument(() => {
      const platformFetch = window.fetch.bind(window);
      const read: string[] = [];
      Object.assign(window, { statsRead: read });
      window.fetch = async (input, init) => {
        const response = await platformFetch(input, init);
        const text = response.text.bind(response);
        response.text = () => text().then((body) => (read.push(String(input)), body));
        return response;
      };
    });
    // The network as a user may meet it: a 30d answer held until the window chosen after it has
    // loaded, a proxy's HTML 502 for 7d, no route for 1h at the end.
    let failing = false;
    let held30d: (() => void) | undefined;
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      const url = request.url();
      if (url.includes("window=30d")) held30d = () => void request.continue();
      else if (url.includes("window=7d"))
        void request.respond({ status: 502, contentType: "text/html", body: "<html><h1>502 Bad Gateway</h1></html>" });
      else if (failing && url.includes("/v1/stats")) void request.abort("connectionrefused");
      else void request.continue();
    });
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector("body[data-loaded='24h']", { timeout: 10_000 });
    const text = (id: string) => page.$eval(`#${id}`, (el) => el.textContent ?? "");
    const pressed = () =>
      page.$$eval("[data-window][aria-pressed='true']", (els) => els.map((el) => (el as HTMLElement).dataset.window));

    await page.click("button[data-window='30d']");
    await page.click("button[data-window='1h']");
    await page.waitForSelector("body[data-loaded='1h']", { timeout: 10_000 });
    expect(held30d).toBeDefined();
    held30d!();
    await page.waitForFunction(() => (window as any).statsRead.some((url: string) => url.includes("window=30d")));
    expect(await page.evaluate(() => document.body.dataset.loaded)).toBe("1h");
    expect(await pressed()).toEqual(["1h"]);
    const hour = await readStats("1h");
    expect(await text("search-paid")).toBe(String(hour.totals.web_search.provider_calls));
    expect(Number((await text("saved-usd")).replace("$", ""))).toBeCloseTo(hour.saved_usd, 3);

    await page.click("button[data-window='7d']");
    await page.waitForFunction(() => document.getElementById("status")?.textContent?.startsWith("Could not read"));
    expect(await text("status")).toBe("Could not read /v1/stats: HTTP 502");
    expect(
      await page.evaluate(() => [
        document.body.dataset.loaded ?? "none",
        document.getElementById("board")?.dataset.stale,
      ]),
    ).toEqual(["none", "true"]);

    failing = true;
    await page.click("button[data-window='24h']");
    await page.waitForFunction(() => document.getElementById("status")?.textContent?.includes("could not be reached"));
    expect(await page.$eval("#board", (el) => (el as HTMLElement).hidden)).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("asks for the token again when /v1/stats answers 401 (a token revoked or mistyped), and forgets the one it kept", async () => {
    const page = await browser.newPage();
    // The tab kept a token that is no longer valid.
    await page.evaluateOnNewDocument(() => sessionStorage.setItem("edge-tools-token", "a-revoked-token"));
    const refused = page.waitForResponse((response) => response.url().includes("/v1/stats"));
    await page.goto(`${deno.url}/dashboard`);
    expect((await refused).status()).toBe(401);
    // Either the login form has the focus again, or the page reported a failure.
    await page.waitForFunction(
      () =>
        document.activeElement?.id === "token" ||
        document.getElementById("status")?.textContent?.startsWith("Could not read"),
    );
    expect(await page.$eval("#login", (el) => (el as HTMLElement).hidden)).toBe(false);
    expect(await page.$eval("#board", (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem("edge-tools-token"))).toBeNull();
    await page.close();
  }, 60_000);
});
