/**
 * Bot walls and challenge interstitials: a page that answers "Just a moment..." instead of
 * itself. Such a page is never the resource, so it must reach neither a caller as content nor the
 * cache. One detector for every extract provider: on raw HTML (direct, before any conversion) and
 * on a hosted provider's title and markdown. Plain substring checks on a bounded prefix, so the
 * cost is linear and small whatever the page.
 */
import { AppError } from "../http/errors";

/** Challenge pages are small; markers sit near the top. Nothing past this is read. */
const SCAN_CHARS = 256 * 1024;
/** A hosted provider's markdown of an interstitial is a few lines; an article quoting one is not. */
const SHORT_TEXT_CHARS = 3_000;
/** Statuses bot walls answer with; with one, a captcha widget alone is enough. */
export const CHALLENGE_STATUSES: ReadonlySet<number> = new Set([403, 429, 503]);

interface Signature {
  vendor: string;
  /** Lower-case substrings that only a challenge page carries (HTML source). */
  html?: readonly string[];
  /** Lower-case page titles, matched exactly after trimming. */
  titles?: readonly string[];
  /** Lower-case phrases of the visible text, counted on short pages only. */
  text?: readonly string[];
  /**
   * Markers a normal page may also carry (a reCAPTCHA on a contact form, an "Access Denied" title):
   * they count only with a 403/429/503 status or a challenge title.
   */
  weak?: readonly string[];
}

const SIGNATURES: readonly Signature[] = [
  {
    vendor: "Cloudflare",
    html: [
      "window._cf_chl_opt",
      "cf_chl_opt",
      "cf-browser-verification",
      "cf_captcha_kind",
      "cf-chl-widget",
      // The interstitial's own scripts. Not "/cdn-cgi/challenge-platform/h/" alone: Cloudflare's
      // JavaScript Detections put /cdn-cgi/challenge-platform/h/b/scripts/jsd/… into ordinary pages.
      "/cdn-cgi/challenge-platform/h/b/orchestrate/",
      "/cdn-cgi/challenge-platform/h/g/orchestrate/",
    ],
    titles: ["just a moment...", "just a moment…", "attention required! | cloudflare", "please wait... | cloudflare"],
    text: [
      "checking your browser before accessing",
      "verifying you are human. this may take a few seconds",
      "needs to review the security of your connection before proceeding",
      "enable javascript and cookies to continue",
      "sorry, you have been blocked",
      "performance & security by cloudflare",
    ],
    weak: ["cf-error-details", "cf-ray", "/cdn-cgi/"],
  },
  {
    vendor: "PerimeterX",
    html: ['id="px-captcha"', "px-captcha", "captcha.px-cdn.net", "captcha.px-cloud.net"],
    titles: ["access to this page has been denied", "access to this page has been denied."],
    text: ["press & hold to confirm you are a human", "press and hold to confirm you are a human"],
  },
  {
    vendor: "DataDome",
    html: ["geo.captcha-delivery.com", "ct.captcha-delivery.com", "captcha-delivery.com/captcha"],
    text: ["please enable js and disable any ad blocker"],
    weak: ["datadome"],
  },
  {
    vendor: "Akamai",
    html: ["sec-if-cpt-container", "/_sec/cp_challenge/", "errors.edgesuite.net", "errors&#46;edgesuite&#46;net"],
    text: ["powered and protected by akamai"],
    // Akamai's "Access Denied" page names an incident reference; with that title it is the wall.
    weak: ["reference&#32;&#35;", "reference #"],
  },
  {
    vendor: "hCaptcha",
    text: ["please complete the security check to access"],
    weak: ["hcaptcha.com/1/api.js", 'class="h-captcha"', "h-captcha"],
  },
  {
    vendor: "reCAPTCHA",
    text: [
      "our systems have detected unusual traffic from your computer network",
      "our systems have detected unusual traffic from your network",
    ],
    weak: [
      "google.com/recaptcha/api.js",
      "recaptcha/api.js",
      'class="g-recaptcha"',
      "g-recaptcha",
      "recaptcha.net/recaptcha",
    ],
  },
];

/** Titles any vendor's interstitial uses; with one, a weak marker is enough. */
const CHALLENGE_TITLES = [
  "just a moment",
  "attention required",
  "security check",
  "verify you are human",
  "are you a robot",
  "are you human",
  "one more step",
  "checking your browser",
  "please verify",
  "access denied",
  "bot verification",
  "human verification",
  "captcha",
];

export interface PageEvidence {
  /** HTTP status of the page, when known (direct fetches; Firecrawl's metadata). */
  status?: number;
  title?: string;
  /** Raw HTML source (direct). */
  html?: string;
  /** Visible text or markdown (hosted providers). */
  text?: string;
}

/**
 * The vendor of the bot wall this page is, or null for an ordinary page.
 * @example detectChallenge({ title: "Just a moment...", text: "##" }) // "Cloudflare"
 * @example detectChallenge({ status: 200, html: '<form><div class="g-recaptcha"></div></form><article>...' }) // null
 */
export function detectChallenge(page: PageEvidence): string | null {
  const html = (page.html ?? "").slice(0, SCAN_CHARS).toLowerCase();
  const text = page.text !== undefined && page.text.length <= SHORT_TEXT_CHARS ? page.text.toLowerCase() : "";
  const title = (page.title ?? (html ? titleOf(html) : "")).trim().toLowerCase();
  const source = html || text;
  const suspicious =
    (page.status !== undefined && CHALLENGE_STATUSES.has(page.status)) ||
    CHALLENGE_TITLES.some((t) => title.includes(t));
  for (const signature of SIGNATURES) {
    if (signature.titles?.includes(title)) return signature.vendor;
    if (html && signature.html?.some((marker) => html.includes(marker))) return signature.vendor;
    if (text && signature.text?.some((phrase) => text.includes(phrase))) return signature.vendor;
  }
  if (!suspicious) return null;
  for (const signature of SIGNATURES) {
    if (signature.weak?.some((marker) => source.includes(marker))) return signature.vendor;
    // A short page with a challenge title or status and the vendor's words is the wall itself.
    if (html && html.length <= SHORT_TEXT_CHARS * 4 && signature.text?.some((phrase) => html.includes(phrase)))
      return signature.vendor;
  }
  return null;
}

/** The refusal for a page that is a bot wall: in-band `challenge_page`, never stored. */
export function challengePage(url: string, vendor: string): AppError {
  return new AppError(
    502,
    "challenge_page",
    `The page at ${hostOf(url)} answered with a ${vendor} bot challenge instead of its content; try again later or use another extract provider.`,
  );
}

/**
 * Throws `challenge_page` when the evidence is a bot wall.
 * @example assertNotChallenge(request.url, { title, text: markdown });
 */
export function assertNotChallenge(url: string, page: PageEvidence): void {
  const vendor = detectChallenge(page);
  if (vendor) throw challengePage(url, vendor);
}

function titleOf(lowerHtml: string): string {
  const open = lowerHtml.indexOf("<title");
  if (open < 0) return "";
  const start = lowerHtml.indexOf(">", open);
  const end = start < 0 ? -1 : lowerHtml.indexOf("</title", start);
  if (end < 0) return "";
  return lowerHtml
    .slice(start + 1, Math.min(end, start + 1 + 300))
    .replace(/&hellip;/g, "…")
    .replace(/\s+/g, " ");
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "the address";
  }
}
