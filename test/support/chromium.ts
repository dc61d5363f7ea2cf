/**
 * Debian's Chromium for the browser tests: installed here when missing and we are root (a fresh
 * machine or CI; .ci/run does the same up front), else the test fails saying what to install.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

export const CHROMIUM = "/usr/bin/chromium";

/** The flags every browser test launches with; `userDataDir` is a fresh temporary folder. */
export const chromiumArgs = (userDataDir: string): string[] => [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  `--user-data-dir=${userDataDir}`,
];

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0)
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`);
  execFileSync("apt-get", ["update"], { stdio: "inherit", timeout: 300_000 });
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], {
    stdio: "inherit",
    timeout: 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} is still missing`);
  return CHROMIUM;
}

/** Debian's Chromium, headless with the tests' flags, its profile in `work`/profile. */
export function launchChromium(work: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: chromiumArgs(join(work, "profile")),
  });
}
