/** The bot-wall detector on its own: every vendor fixture is caught, ordinary pages are not. */
import { describe, expect, it } from "vitest";
import { detectChallenge } from "../../shared/web/challenge";
import { ARTICLE_HTML, CHALLENGE_PAGES, PAGE_WITH_CAPTCHA_FORM } from "../emulator/fixtures";

describe("detectChallenge", () => {
  it.each(Object.entries(CHALLENGE_PAGES))("catches %s in the raw HTML with its status", (_, page) => {
    expect(detectChallenge({ status: page.status, html: page.html })).not.toBeNull();
  });

  it.each(Object.entries(CHALLENGE_PAGES))("catches %s in a hosted reader's title and markdown", (_, page) => {
    expect(detectChallenge({ title: page.title, text: page.markdown })).not.toBeNull();
  });

  it("names the vendor", () => {
    expect(detectChallenge({ title: "Just a moment...", text: "##" })).toBe("Cloudflare");
    expect(detectChallenge({ status: 403, html: CHALLENGE_PAGES.perimeterx.html })).toBe("PerimeterX");
    expect(detectChallenge({ status: 403, html: CHALLENGE_PAGES.datadome.html })).toBe("DataDome");
  });

  it("lets ordinary pages through: an article, a form with a captcha, a long article quoting a wall", () => {
    expect(detectChallenge({ status: 200, html: ARTICLE_HTML })).toBeNull();
    expect(detectChallenge({ status: 200, html: PAGE_WITH_CAPTCHA_FORM })).toBeNull();
    const essay = `# How bot walls work\n\n${"Some words about edge caches and crawlers. ".repeat(100)}They show "Checking your browser before accessing" and similar lines.`;
    expect(detectChallenge({ title: "How bot walls work", text: essay })).toBeNull();
    expect(detectChallenge({ status: 403, html: "<html><body><h1>Forbidden</h1></body></html>" })).toBeNull();
    // Cloudflare's JavaScript Detections script, which it injects into ordinary pages it serves.
    const detections = `<script>(function(){var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/h/b/scripts/jsd/787bc399e22f/main.js';document.head.appendChild(a)})();</script>`;
    expect(detectChallenge({ status: 200, html: ARTICLE_HTML.replace("</body>", `${detections}</body>`) })).toBeNull();
  });

  it("reads only a bounded prefix, so a huge page costs little", () => {
    // The same wall marker is seen near the top and not 22 MB down: only a prefix is scanned (its
    // cost is the prefix's, whatever the page's size; no timing here, the box may be loaded).
    const filler = "<p>text</p>".repeat(2_000_000);
    const wallFirst = `<html><head><title>Big</title></head><body><div id="px-captcha"></div>${filler}</body></html>`;
    const wallLast = `<html><head><title>Big</title></head><body>${filler}<div id="px-captcha"></div></body></html>`;
    expect(detectChallenge({ status: 403, html: wallFirst })).not.toBeNull();
    expect(detectChallenge({ status: 403, html: wallLast })).toBeNull();
  });
});
