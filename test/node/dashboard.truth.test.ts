/**
 * The dashboard tells the truth at a glance (docs/stats.md "The dashboard"), in a real headless
 * Chromium against the real Deno service and the loopback emulator: before anything is counted it
 * says how to fill the window; before its script runs it says it is loading; after real proxied
 * sessions (one of them a screenshot session) its headline is `/v1/stats`' saved_usd, the provider's
 * caching is shown apart, the sessions table lists `/v1/stats/sessions` as text, and every drawn
 * gridline carries its value, read back from the SVG and checked against the bars and the ledger.
 * The screenshot is kept in test-output/dashboard-truth.png.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars } from "../../scripts/local-stack";
import { CONFIG_PLACES, loadConfig } from "../../shared/config/config.load";
import { type RunningEmulator, startEmulator } from "../emulator/server";
import { encodePng, photoPixels } from "../fixtures/images";
import { launchChromium } from "../support/chromium";
import { type DenoService, denoFlightJoiners, startDeno } from "../support/deno-service";
import { answeredTogether } from "../support/emulator-client";
import { searchFlightKey } from "../support/flight-keys";

const OUT = join(resolve(import.meta.dirname, "../.."), "test-output");
const TOKEN = "dashboard-truth-token-1";
const auth = { authorization: `Bearer ${TOKEN}` };

let emulator: RunningEmulator;
let deno: DenoService;
let browser: Browser;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "dashboard-truth-"));
  emulator = await startEmulator();
  deno = await startDeno({
    env: {
      ...emulatorVars(emulator.url),
      DENO_KV_PATH: join(work, "kv.sqlite3"),
      API_TOKENS: TOKEN,
      SECURITY_ALLOW_ANONYMOUS: "false",
    },
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

const getJson = async (path: string) => (await (await fetch(`${deno.url}${path}`, { headers: auth })).json()) as any;
/** The page's money format. */
const usd = (n: number) => {
  const a = Math.abs(n);
  return (n < 0 ? "\u2212$" : "$") + (a >= 100 ? a.toFixed(0) : a >= 1 ? a.toFixed(2) : a.toFixed(4));
};

/** An Anthropic Messages call through the proxy, in `session` when given. */
async function proxied(body: unknown, session?: string): Promise<Response> {
  const response = await fetch(`${deno.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-ant-dashboard-truth",
      "x-service-token": TOKEN,
      ...(session === undefined ? {} : { "x-session-id": session }),
    },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  return response;
}

/** Opens the dashboard for `window` and waits for it to show that window. */
async function open(window: string): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1400 });
  // The token as the page keeps it once asked (the login itself is test/node/dashboard.browser.test.ts').
  await page.evaluateOnNewDocument((token) => sessionStorage.setItem("edge-tools-token", token), TOKEN);
  await page.goto(`${deno.url}/dashboard?window=${window}`, { waitUntil: "networkidle0" });
  await page.waitForSelector(`body[data-loaded='${window}']`, { timeout: 10_000 });
  return page;
}

/** A chart as drawn: its gridlines (y and label) and its bars (top, height). */
async function drawn(page: Page, id: string) {
  // Top-down, as a reader scans an axis.
  const chart = await page.$eval(`#${id}`, (svg) => ({
    grid: [...svg.querySelectorAll("line.grid")].map((line) => Number(line.getAttribute("y1"))),
    ticks: [...svg.querySelectorAll("text.tick")].map((text) => ({
      y: Number(text.getAttribute("y")) - 3,
      label: text.textContent ?? "",
    })),
    bars: [...svg.querySelectorAll("rect")].map((rect) => ({
      y: Number(rect.getAttribute("y")),
      height: Number(rect.getAttribute("height")),
    })),
  }));
  chart.grid.sort((a, b) => a - b);
  chart.ticks.sort((a, b) => a.y - b.y);
  return chart;
}

/**
 * Reads a chart's axis back from its drawing: every gridline has a label at its height, the labels
 * are evenly spaced values, and they map to heights linearly. Returns the value of a bar's height.
 */
function readAxis(chart: Awaited<ReturnType<typeof drawn>>, parse: (label: string) => number) {
  expect(chart.ticks.map((t) => t.y)).toEqual(chart.grid);
  const values = chart.ticks.map((t) => parse(t.label));
  expect(values.every(Number.isFinite), JSON.stringify(chart.ticks)).toBe(true);
  const steps = values.slice(1).map((v, i) => v - values[i]!);
  for (const step of steps) expect(step).toBeCloseTo(steps[0]!, 9);
  expect(steps[0]).toBeLessThan(0); // drawn top-down: the first gridline is the highest value
  const perUnit = (chart.grid[1]! - chart.grid[0]!) / -steps[0]!;
  return { values, heightOf: (bar: { height: number }) => bar.height / perUnit };
}

describe("the dashboard, read as a user reads it", () => {
  it("says it is loading before its script runs, and says how to fill an empty window instead of $0.0000", async () => {
    const still = await browser.newPage();
    await still.setJavaScriptEnabled(false);
    await still.goto(`${deno.url}/dashboard`, { waitUntil: "load" });
    expect(await still.$eval("#loading", (el) => [(el as HTMLElement).hidden, el.textContent])).toEqual([
      false,
      "Loading the savings ledger…",
    ]);
    await still.close();

    const page = await open("24h");
    expect(await page.$eval("#loading", (el) => (el as HTMLElement).hidden)).toBe(true);
    expect(await page.$eval("#empty", (el) => (el as HTMLElement).hidden)).toBe(false);
    // biome-ignore lint/performance/useDomNodeTextContent: what is rendered visible is the point
    const visible = await page.evaluate(() => document.body.innerText);
    expect(visible).toContain("npm run demo -- --serve");
    expect(visible).not.toContain("$0.0000");
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: join(OUT, "dashboard-empty.png"), fullPage: true });
    await page.close();
  }, 60_000);

  it("after real proxied sessions: headline, the provider's caching apart, the sessions, and axes that read true", async () => {
    // Web calls: 5 identical searches at once (1 paid, 4 avoided: the provider holds its answer
    // until the other 4 joined), then 2 repeats (hits): 7 in the hour, an odd top whose half is no
    // whole number (the old axis labelled 3.5 as "4").
    const gate = `truth-${Date.now()}`;
    const q = `truth run [gate:${gate}] ${gate}`;
    const key = await searchFlightKey(loadConfig(emulatorVars(emulator.url), CONFIG_PLACES.deno), q);
    const search = () =>
      fetch(`${deno.url}/v1/web_search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: JSON.stringify({ query: q }),
      }).then((r) => r.arrayBuffer());
    await answeredTogether(
      emulator.url,
      { gate, paying: 1, joiners: 4, count: () => denoFlightJoiners([deno], key) },
      Array.from({ length: 5 }, search),
    );
    await search();
    await search();
    // A screenshot session: a cached system prompt, then turns that each add a screenshot.
    const system = [
      {
        type: "text",
        text: `truth agent ${"A long system prompt. ".repeat(400)}`,
        cache_control: { type: "ephemeral" },
      },
    ];
    const shot = Buffer.from(await encodePng(photoPixels(1600, 1000, 9), 1600, 1000, 3)).toString("base64");
    const messages: unknown[] = [{ role: "user", content: "open the checkout page" }];
    const screenshotSession = "checkout-flow-17";
    for (let turn = 0; turn < 3; turn++) {
      await proxied({ model: "claude-sonnet-4-5", max_tokens: 32, system, messages }, screenshotSession);
      messages.push(
        { role: "assistant", content: [{ type: "tool_use", id: `t${turn}`, name: "screenshot", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: `t${turn}`,
              content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: shot } }],
            },
          ],
        },
      );
    }
    // A caller's session id that is markup: it must show as the text it is.
    const markup = `<img src=x onerror="document.body.dataset.pwned=1"><b id="injected">bold</b>`;
    await proxied({ model: "claude-sonnet-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }, markup);
    // And one without an id: its session is the derived X-Edge-Session.
    const derived = (
      await proxied({ model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: "derived" }] })
    ).headers.get("x-edge-session");

    // The answers' usage is written after they end: wait until all five sessions' requests are in.
    let sessions: any[] = [];
    for (let i = 0; i < 100; i++) {
      sessions = (await getJson("/v1/stats/sessions?window=24h")).sessions;
      if (sessions.reduce((n: number, s: any) => n + s.output_tokens, 0) > 0 && sessions.length === 3) {
        const stats = await getJson("/v1/stats?window=24h");
        if (stats.totals.llm.requests === 5 && stats.totals.web_search.requests === 7) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const stats = await getJson("/v1/stats?window=24h");
    expect(stats.totals.llm.requests).toBe(5);
    expect(stats.totals.web_search).toMatchObject({ requests: 7, provider_calls: 1, coalesced: 4, hits: 2 });
    expect(sessions.map((s: any) => s.session).sort()).toEqual([screenshotSession, markup, derived].sort());

    const page = await open("24h");
    const text = (selector: string) => page.$eval(selector, (el) => el.textContent ?? "");
    expect(await page.$eval("#empty", (el) => (el as HTMLElement).hidden)).toBe(true);
    // The headline is the service's own saving; the provider's caching is apart, under its own name.
    // The screenshot session's fitted images changed its bill: the LLM's own saving is in play.
    const llm = stats.totals.llm;
    expect(llm.saved_usd).not.toBe(0);
    expect(llm.saved_usd).toBeCloseTo(llm.cost_as_sent_usd - llm.cost_usd, 9);
    expect(stats.saved_usd).toBeCloseTo(
      stats.totals.web_search.saved_usd + stats.totals.web_extract.saved_usd + llm.saved_usd,
      9,
    );
    expect(await text("#saved-usd")).toBe(usd(stats.saved_usd));
    expect(await text("#saved-parts")).toBe(
      `web calls avoided ${usd(stats.totals.web_search.saved_usd + stats.totals.web_extract.saved_usd)} + LLM requests as sent − billed ${usd(llm.saved_usd)}`,
    );
    expect([await text("#llm-billed"), await text("#llm-as-sent")]).toEqual([
      usd(llm.cost_usd),
      usd(llm.cost_as_sent_usd),
    ]);
    const cacheSaved = llm.cache_saved_usd;
    expect(cacheSaved).toBeGreaterThan(0);
    expect(await text("#cache-saved-usd")).toBe(usd(cacheSaved));
    expect(await page.$eval("#cache-saved-usd", (el) => el.parentElement?.textContent ?? "")).toContain(
      "you get this with or without this service",
    );
    // The sessions, in the answer's order, every cell as text.
    const rows = await page.$$eval("#sessions tbody tr", (trs) =>
      trs.map((tr) => [...(tr as HTMLTableRowElement).cells].map((td) => td.textContent)),
    );
    expect(rows.map((r) => r[0])).toEqual(sessions.map((s: any) => s.session));
    for (const [i, s] of sessions.entries())
      expect(rows[i]!.slice(1, 8)).toEqual([
        s.model,
        String(s.requests),
        String(s.images_fitted),
        String(s.images_retired),
        usd(s.cost_usd),
        usd(s.cost_as_sent_usd),
        usd(s.saved_usd),
      ]);
    const checkout = sessions.find((s: any) => s.session === screenshotSession);
    expect(checkout.requests).toBe(3);
    expect(checkout.images_fitted).toBeGreaterThan(0);
    expect(await page.$("#injected")).toBeNull();
    expect(await page.evaluate(() => document.body.dataset.pwned)).toBeUndefined();

    // Every gridline carries its value, and a bar's height is its value.
    const hours = new Map<number, any>(stats.series.map((p: any) => [Date.parse(p.t), p]));
    const searchChart = await drawn(page, "chart-search");
    const searchAxis = readAxis(searchChart, (label) => (/^\d+$/.test(label) ? Number(label) : Number.NaN));
    expect(searchAxis.values.every(Number.isInteger)).toBe(true);
    const expected = [...hours.values()]
      .flatMap((p) => [p.web_search?.provider_calls ?? 0, (p.web_search?.hits ?? 0) + (p.web_search?.coalesced ?? 0)])
      .filter((v) => v > 0)
      .sort();
    expect(searchChart.bars.map((bar) => Math.round(searchAxis.heightOf(bar) * 1000) / 1000).sort()).toEqual(expected);
    // The top gridline is at or over the tallest stack, less than a step above it.
    const tallest = Math.max(...[...hours.values()].map((p) => p.web_search?.requests ?? 0));
    const [top, next] = searchAxis.values as [number, number];
    expect(top).toBeGreaterThanOrEqual(tallest);
    expect(next).toBeLessThan(tallest);
    // Money: every gridline labelled in dollars, evenly spaced, the bars' heights the saving per hour.
    const saved = await drawn(page, "chart-saved");
    const savedAxis = readAxis(saved, (label) => Number(label.replace("$", "")) * (label.startsWith("-") ? -1 : 1));
    expect(savedAxis.values).toContain(0);
    const perHour = [...hours.values()]
      .map((p) => (p.web_search?.saved_usd ?? 0) + (p.web_extract?.saved_usd ?? 0) + (p.llm?.saved_usd ?? 0))
      .filter((v) => v !== 0);
    expect(saved.bars.map((bar) => savedAxis.heightOf(bar))).toHaveLength(perHour.length);
    for (const [i, bar] of saved.bars.entries()) expect(savedAxis.heightOf(bar)).toBeCloseTo(Math.abs(perHour[i]!), 6);
    // The share chart reads in percent; the bytes chart in one unit.
    expect(readAxis(await drawn(page, "chart-llm"), (l) => Number(l.replace("%", ""))).values).toEqual([
      100, 75, 50, 25, 0,
    ]);
    const bytes = await drawn(page, "chart-images");
    const unit = bytes.ticks[0]!.label.split(" ")[1];
    expect(bytes.ticks.every((t) => t.label.endsWith(` ${unit}`))).toBe(true);
    const scale = { B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824 }[unit as "B"];
    const bytesAxis = readAxis(bytes, (l) => Number(l.split(" ")[0]) * scale);
    expect(bytes.bars).toHaveLength(1);
    expect(bytesAxis.heightOf(bytes.bars[0]!)).toBeCloseTo(stats.totals.llm.bytes_saved, -1);
    // The bytes tile says what it counts.
    expect(await page.$eval("#image-bytes-saved", (el) => el.parentElement?.querySelector(".label")?.textContent)).toBe(
      "Request bytes not sent (images fitted or retired)",
    );

    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: join(OUT, "dashboard-truth.png"), fullPage: true });

    // The window says what it spans: "This hour" is the clock hour so far, and the page says so.
    // The hour asked before and after the page's own question: the clock hour may turn between.
    const sinceHour = async () =>
      `${String(new Date(Date.parse((await getJson("/v1/stats?window=1h")).from)).getHours()).padStart(2, "0")}:00`;
    const hourBefore = await sinceHour();
    await page.click("button[data-window='1h']");
    await page.waitForSelector("body[data-loaded='1h']", { timeout: 10_000 });
    const hourAfter = await sinceHour();
    expect(await text("button[data-window='1h']")).toBe("This hour");
    const range = await text("#range");
    expect(range).toContain("this clock hour so far: since ");
    expect(
      [hourBefore, hourAfter].some((since) => range.includes(since)),
      range,
    ).toBe(true);
    await page.close();
  }, 120_000);
});
