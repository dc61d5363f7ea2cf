/**
 * How the dashboard writes a signed figure (docs/stats.md, "Signs"), in a real headless Chromium
 * (puppeteer-core) against the real Deno service, with /v1/stats and /v1/stats/sessions answered
 * as a window holding a negative saving: a minus sign before the unit (−$0.0123, −2.9 KiB), in
 * the headline, its parts, the sessions table and the gridlines; a negative that rounds to zero
 * shows no sign; no `-$` anywhere on the page.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/chromium";
import { type DenoService, startDeno } from "../support/deno-service";

const TOKEN = "dashboard-money-token-1";
const MINUS = "\u2212";

let deno: DenoService;
let browser: Browser;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "dashboard-money-"));
  deno = await startDeno({
    env: { DENO_KV_PATH: join(work, "kv.sqlite3"), API_TOKENS: TOKEN, SECURITY_ALLOW_ANONYMOUS: "false" },
  });
  browser = await launchChromium(work);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await deno?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${TOKEN}` };
const getJson = async (path: string) => (await (await fetch(`${deno.url}${path}`, { headers: auth })).json()) as any;

describe("the dashboard's signed money", () => {
  it("writes a negative saving as −$0.0123 in the headline, its parts, the sessions and the gridlines, and a rounded-away one unsigned", async () => {
    const stats = await getJson("/v1/stats?window=24h");
    const sessions = await getJson("/v1/stats/sessions?window=24h");
    const from = Date.parse(stats.from);
    const at = (h: number) => new Date(from + h * 3_600_000).toISOString();
    const crafted = {
      ...stats,
      saved_usd: -0.0123,
      totals: {
        ...stats.totals,
        vision: { ...stats.totals.vision, bytes_in: 3_000, bytes_out: 6_000 },
        llm: { ...stats.totals.llm, requests: 2, cost_usd: 0.05, cost_as_sent_usd: 0.0377, saved_usd: -0.0123 },
        web_search: { ...stats.totals.web_search, saved_usd: -0.00001 },
      },
      series: [
        { t: at(2), llm: { requests: 1, saved_usd: -0.0123 } },
        { t: at(3), llm: { requests: 1, saved_usd: 0.004 } },
      ],
    };
    const row = (session: string, saved: number) => ({
      session,
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      requests: 1,
      first_at: at(2),
      last_at: at(2),
      input_tokens: 100,
      cache_write_tokens: 0,
      cache_read_tokens: 0,
      output_tokens: 10,
      images_fitted: 0,
      images_retired: 0,
      cost_usd: 0.05,
      cost_as_sent_usd: 0.05 + saved,
      saved_usd: saved,
    });
    const craftedSessions = { ...sessions, sessions: [row("cost-more", -0.0123), row("rounds-away", -0.00001)] };
    const page = await browser.newPage();
    await page.goto(`${deno.url}/dashboard`, { waitUntil: "networkidle0" });
    await page.evaluate((token) => sessionStorage.setItem("edge-tools-token", token), TOKEN);
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      const url = request.url();
      const body = url.includes("/v1/stats/sessions?") ? craftedSessions : url.includes("/v1/stats?") ? crafted : null;
      if (body) void request.respond({ status: 200, contentType: "application/json", body: JSON.stringify(body) });
      else void request.continue();
    });
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector("body[data-loaded='24h']", { timeout: 10_000 });
    const text = (selector: string) => page.$eval(selector, (el) => el.textContent);

    expect(await text("#saved-usd")).toBe(`${MINUS}$0.0123`);
    expect(await text("#saved-parts")).toBe(
      `web calls avoided $0.0000 + LLM requests as sent − billed ${MINUS}$0.0123`,
    );
    expect(await text("#search-saved")).toMatch(/^\$0\.0000 saved of /);
    expect(await text("#image-bytes-saved")).toBe(`${MINUS}3.9 KiB`);
    const saved = await page.$$eval("#sessions tbody tr", (rows) =>
      rows.map((r) => [(r as HTMLTableRowElement).dataset.session, (r as HTMLTableRowElement).cells[7]!.textContent]),
    );
    expect(saved).toEqual([
      ["cost-more", `${MINUS}$0.0123`],
      ["rounds-away", "$0.0000"],
    ]);
    const ticks = await page.$eval("#chart-saved", (svg) =>
      [...svg.querySelectorAll("text.tick")].map((t) => t.textContent),
    );
    expect(ticks.length).toBeGreaterThan(2);
    expect(ticks.filter((t) => t?.startsWith(MINUS)).length).toBeGreaterThan(0);
    for (const tick of ticks) expect(tick).toMatch(new RegExp(`^${MINUS}?\\$\\d+\\.\\d+$`));
    const shown = await page.evaluate(() => document.body.textContent);
    expect(shown).not.toMatch(/-\$|\$-/);
    await page.close();
  }, 60_000);
});
