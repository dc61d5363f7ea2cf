/**
 * Deterministic content the emulator serves: numbered search results derived from the query,
 * extracted page bodies, and the HTML test pages. Same input, same bytes, every run.
 */

/** Every query has this many results in the emulated index. */
export const RESULTS_PER_QUERY = 100;

/** Markers a test puts inside a query or URL to steer the emulator for that one call. */
export interface Markers {
  failStatus?: number;
  slowMs?: number;
  empty: boolean;
  badJson: boolean;
  auth: boolean;
  /** Extract APIs report the URL as failed in-band (Tavily failed_results, Firecrawl success:false). */
  failed: boolean;
  /** `[malformed:KIND]`: a 200 whose body is not the provider's documented shape (see MALFORMED_ANSWERS). */
  malformed?: MalformedKind;
  /** `[challenge:VENDOR]`: the page is that vendor's bot wall (see CHALLENGE_PAGES). */
  challenge?: ChallengeVendor;
  /** `[bloat:N]`: search results' snippets padded so they add up to about N characters. */
  bloatChars?: number;
}

/**
 * The URL a hosted extractor reports it ended on for `url`: the URL with `final=1` added, on the
 * host `[final-host:HOST]` names, and with a presigned-looking query under `[final-signed]` (a
 * site that redirects to a signed download URL).
 */
export function finalUrlFor(url: string): string {
  const text = safeDecode(url);
  const host = /\[final-host:([a-z0-9.-]+)\]/.exec(text)?.[1];
  const signed = text.includes("[final-signed]")
    ? "&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEMULATOR7EXAMPLE%2F20261203%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c"
    : "";
  const final = `${url}${url.includes("?") ? "&" : "?"}final=1${signed}`;
  if (!host || !URL.canParse(final)) return final;
  const moved = new URL(final);
  moved.hostname = host;
  return moved.href;
}

/**
 * Reads the markers of one call. `[fail:503@tavily]` fails only calls to that provider, so a test
 * can break the configured provider while the keyless rescue still answers.
 */
export function readMarkers(subject: string, provider?: string): Markers {
  const text = safeDecode(subject);
  const scopedFail = /\[fail:(\d{3})(?:@([a-z]+))?\]/.exec(text);
  const fail = scopedFail && (!scopedFail[2] || scopedFail[2] === provider) ? scopedFail : null;
  const slow = /\[slow:(\d{1,6})\]/.exec(text);
  return {
    failStatus: fail ? Number(fail[1]) : undefined,
    slowMs: slow ? Number(slow[1]) : undefined,
    empty: text.includes("[empty]"),
    badJson: text.includes("[badjson]"),
    auth: text.includes("[auth]"),
    failed: text.includes("[failed]"),
    malformed: (/\[malformed:([a-z-]+)\]/.exec(text)?.[1] as MalformedKind | undefined) ?? undefined,
    challenge: (/\[challenge:([a-z-]+)\]/.exec(text)?.[1] as ChallengeVendor | undefined) ?? undefined,
    bloatChars: Number(/\[bloat:(\d{1,9})\]/.exec(text)?.[1] ?? 0) || undefined,
  };
}

/** 200 answers that break every JSON provider's documented shape, as seen from real outages. */
export const MALFORMED_ANSWERS = {
  "empty-object": {},
  error: { error: "upstream-body-detail: quota exceeded" },
  "results-string": { results: "x" },
  "results-null": { results: null },
  "bad-items": { results: [{ url: 42, title: { nested: true } }] },
} as const;
export type MalformedKind = keyof typeof MALFORMED_ANSWERS;

/** A 200 HTML page that is neither a results page nor DuckDuckGo's "No results." notice. */
export const MALFORMED_HTML =
  "<!DOCTYPE html><html><body><p>upstream-body-detail: something else entirely</p></body></html>";

export interface ChallengeFixture {
  /** Status the site answers with. */
  status: number;
  title: string;
  /** The page as a browser (or the direct provider) receives it. */
  html: string;
  /** What a hosted reader makes of it (Tavily raw_content, Jina content, Firecrawl markdown). */
  markdown: string;
}

const challengeHtml = (title: string, head: string, body: string) =>
  `<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

/**
 * Bot walls with the structure of the real ones (vendor scripts, element ids, wording), written
 * for the tests: no third-party page is copied.
 */
export const CHALLENGE_PAGES = {
  cloudflare: {
    status: 403,
    title: "Just a moment...",
    html: challengeHtml(
      "Just a moment...",
      `<meta name="robots" content="noindex,nofollow"><script>(function(){window._cf_chl_opt={cvId:'3',cZone:'docs.example.com',cType:'managed'};})();</script>`,
      `<div class="main-wrapper" role="main"><div class="main-content"><h1 class="zone-name-title h1">docs.example.com</h1><h2 class="h2" id="challenge-running">Verifying you are human. This may take a few seconds.</h2><div id="challenge-stage"></div><noscript><div class="h2">Enable JavaScript and cookies to continue</div></noscript></div></div><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8c0ffee"></script>`,
    ),
    markdown: "##",
  },
  "cloudflare-blocked": {
    status: 403,
    title: "Attention Required! | Cloudflare",
    html: challengeHtml(
      "Attention Required! | Cloudflare",
      "",
      `<div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper"><h1 data-translate="block_headline">Sorry, you have been blocked</h1><h2>You are unable to access docs.example.com</h2><p>Cloudflare Ray ID: <strong>8c0ffee0d15ea5e</strong></p></div></div>`,
    ),
    markdown:
      "# Sorry, you have been blocked\n\n## You are unable to access docs.example.com\n\nCloudflare Ray ID: **8c0ffee0d15ea5e**\n\nPerformance & security by Cloudflare",
  },
  hcaptcha: {
    status: 200,
    title: "One more step",
    html: challengeHtml(
      "One more step",
      `<script src="https://hcaptcha.com/1/api.js" async defer></script>`,
      `<h1>One more step</h1><p>Please complete the security check to access docs.example.com.</p><form method="post"><div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001"></div><input type="submit" value="Continue"></form>`,
    ),
    markdown: "# One more step\n\nPlease complete the security check to access docs.example.com.",
  },
  recaptcha: {
    status: 429,
    title: "Unusual traffic",
    html: challengeHtml(
      "Unusual traffic",
      `<script src="https://www.google.com/recaptcha/api.js" async defer></script>`,
      `<p>Our systems have detected unusual traffic from your network.</p><form action="/sorry" method="post"><div class="g-recaptcha" data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI"></div></form>`,
    ),
    markdown: "Our systems have detected unusual traffic from your network.",
  },
  akamai: {
    status: 403,
    title: "Access Denied",
    html: challengeHtml(
      "Access Denied",
      "",
      `<h1>Access Denied</h1>You don't have permission to access "http&#58;&#47;&#47;docs&#46;example&#46;com&#47;" on this server.<p>Reference&#32;&#35;18&#46;6f2e3b17&#46;1733050000&#46;2a1b3c</p><p>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;6f2e3b17</p>`,
    ),
    markdown: `# Access Denied\n\nYou don't have permission to access "http://docs.example.com/" on this server.\n\nReference #18.6f2e3b17.1733050000.2a1b3c`,
  },
  datadome: {
    status: 403,
    title: "docs.example.com",
    html: challengeHtml(
      "docs.example.com",
      `<style>#cmsg{animation:A 1.5s;}</style>`,
      `<p id="cmsg">Please enable JS and disable any ad blocker</p><script>var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2211F522B61E269B','t':'fe','s':17434,'host':'geo.captcha-delivery.com'}</script><script src="https://ct.captcha-delivery.com/c.js"></script>`,
    ),
    markdown: "Please enable JS and disable any ad blocker",
  },
  perimeterx: {
    status: 403,
    title: "Access to this page has been denied",
    html: challengeHtml(
      "Access to this page has been denied",
      `<script>window._pxAppId='PXexample1';</script>`,
      `<div class="px-captcha-container"><h1>Before we continue...</h1><p>Press &amp; Hold to confirm you are a human (and not a bot).</p><div id="px-captcha"></div></div><script src="https://captcha.px-cdn.net/PXexample1/captcha.js"></script>`,
    ),
    markdown: "# Before we continue...\n\nPress & Hold to confirm you are a human (and not a bot).",
  },
} as const satisfies Record<string, ChallengeFixture>;
export type ChallengeVendor = keyof typeof CHALLENGE_PAGES;

/**
 * An ordinary article with a reCAPTCHA on its comment form and a Cloudflare-served script: a
 * detector must let it through.
 */
export const PAGE_WITH_CAPTCHA_FORM = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Contact the edge team</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script><script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script></head>
<body><main><article><h1>Contact the edge team</h1><p>Write to us about caching, cost and latency. We answer within two days.</p>
<form method="post" action="/contact"><textarea name="message"></textarea><div class="g-recaptcha" data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI"></div><button>Send</button></form></article></main></body></html>`;

export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

export interface FakeResult {
  n: number;
  title: string;
  url: string;
  snippet: string;
}

/** Results `from`+1 .. `from`+`count` (1-based numbering) of the emulated index for `query`. */
export function resultsFor(query: string, from: number, count: number): FakeResult[] {
  const markers = readMarkers(query);
  if (markers.empty) return [];
  const slug = slugOf(query);
  const padding = markers.bloatChars ? " filler".repeat(Math.ceil(markers.bloatChars / Math.max(1, count) / 7)) : "";
  const results: FakeResult[] = [];
  for (let n = from + 1; n <= Math.min(from + count, RESULTS_PER_QUERY); n++) {
    results.push({
      n,
      title: `Result ${n} for ${query}`,
      url: `https://example.com/${slug}/${n}`,
      snippet: `Snippet ${n}: what the web says about ${query}.${padding}`,
    });
  }
  return results;
}

export function slugOf(query: string): string {
  const slug = query
    .replace(/\[[a-z]+(?::\d+)?\]/g, " ")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return slug || "q";
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The markdown an extract provider "found" at a URL. */
export function pageMarkdownFor(url: string): { title: string; markdown: string } {
  if (readMarkers(url).empty) return { title: "", markdown: "" };
  const title = `Page at ${url}`;
  // `[chars:N]` asks for a page of about N characters (long pages, storage chunking).
  const size = /\[chars:(\d{1,8})\]/.exec(safeDecode(url));
  if (size) {
    const paragraph = "Long page content, paragraph after paragraph, with words that do not repeat exactly: ";
    let markdown = `# ${title}\n\n`;
    for (let i = 0; markdown.length < Number(size[1]); i++) markdown += `${paragraph}${i}.\n\n`;
    return { title, markdown };
  }
  return {
    title,
    markdown: `# ${title}\n\nThis is the **extracted** content of [the page](${url}).\n\n- first point\n- second point\n\nEnd of page.`,
  };
}

/** DuckDuckGo's HTML results page, shaped like the real one: redirect links, <b> highlights, an ad first. */
export function duckDuckGoPage(query: string, results: FakeResult[]): string {
  const q = escapeHtml(query);
  const ad = `<div class="result results_links results_links_deep result--ad ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;ad_provider=x&amp;u3=1">Sponsored: buy ${q}</a></h2>
    <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=ads.example">An advert, not a result.</a>
  </div>
</div>`;
  const items = results.map((r) => {
    const wrapped = `//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=${r.n.toString(16).padStart(8, "0")}`;
    return `<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="${wrapped}">Result ${r.n} for <b>${q}</b></a>
    </h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="${wrapped}">example.com/${escapeHtml(slugOf(query))}/${r.n}</a>
    </div></div>
    <a class="result__snippet" href="${wrapped}">Snippet ${r.n}: what the web says about <b>${q}</b>.</a>
    <div class="clear"></div>
  </div>
</div>`;
  });
  const body = results.length ? `${ad}\n${items.join("\n")}` : `<div class="no-results">No results.</div>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${q} at DuckDuckGo</title></head>
<body class="body--html"><div id="links" class="results">
${body}
</div>
<div class="nav-link"><form action="/html/" method="post"><input type="hidden" name="q" value="${q}"><input type="hidden" name="s" value="30"><input type="submit" value="Next"></form></div>
</body></html>`;
}

/** A realistic article: site chrome around the content, so converters have something to drop. */
export const ARTICLE_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Understanding Edge Caches &mdash; Example Blog</title>
  <style>body { font-family: sans-serif }</style>
  <script>window.analytics = { track() {} };</script>
</head>
<body>
  <header class="site-header"><a href="/">Example Blog</a><nav><a href="/about">About</a> <a href="/archive">Archive</a></nav></header>
  <main>
    <article>
      <h1>Understanding Edge Caches</h1>
      <p>Edge caches keep <strong>popular answers</strong> close to the people who ask for them. Read the <a href="/docs/cache">cache guide</a> first.</p>
      <h2>Why it matters</h2>
      <ul>
        <li>Fewer paid provider calls</li>
        <li>Lower latency</li>
      </ul>
      <pre><code class="language-ts">const ttl = 20 * 60;
if (ttl &gt; 0) cache.put(key, value);</code></pre>
      <table>
        <thead><tr><th>Case</th><th>Calls</th></tr></thead>
        <tbody><tr><td>Repeat search</td><td>1</td></tr><tr><td>Cold search</td><td>2</td></tr></tbody>
      </table>
      <p>Thanks for reading.</p>
    </article>
  </main>
  <footer class="site-footer"><p>&copy; 2025 Example Blog</p></footer>
  <script src="/app.js"></script>
</body>
</html>`;

/** Latin-1 text that only decodes right when the windows-1252 charset is honoured. */
export function latin1PageBytes(charsetInMeta: boolean): Uint8Array {
  const meta = charsetInMeta ? `<meta charset="windows-1252">` : "";
  const html = `<!DOCTYPE html><html><head>${meta}<title>Caf\u00e9 cr\u00e8me</title></head><body><h1>Caf\u00e9 cr\u00e8me</h1><p>A na\u00efve \u201cquoted\u201d price: \u20ac5.</p></body></html>`;
  return encodeWindows1252(html);
}

const WINDOWS_1252_EXTRAS: Record<number, number> = {
  8364: 0x80,
  8220: 0x93,
  8221: 0x94,
  8216: 0x91,
  8217: 0x92,
  8211: 0x96,
  8212: 0x97,
};

function encodeWindows1252(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    bytes[i] = code < 0x100 ? code : (WINDOWS_1252_EXTRAS[code] ?? 0x3f);
  }
  return bytes;
}

/** An HTML page of exactly `chars` ASCII characters (so also exactly that many bytes). */
export function hugePage(chars: number): string {
  const head = `<!DOCTYPE html><html><head><title>Huge page</title></head><body><h1>Huge page</h1>`;
  const tail = `</body></html>`;
  if (chars <= head.length + tail.length + 7) return "x".repeat(Math.max(0, chars));
  const paragraph = `<p>${"The quick brown fox jumps over the lazy dog. ".repeat(20)}</p>\n`;
  let middle = paragraph.repeat(Math.floor((chars - head.length - tail.length) / paragraph.length));
  const rest = chars - head.length - tail.length - middle.length;
  if (rest >= 7) middle += `<p>${"y".repeat(rest - 7)}</p>`;
  else middle += " ".repeat(rest);
  return head + middle + tail;
}

export function genericPage(path: string): string {
  const name = escapeHtml(path);
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Page ${name}</title></head>
<body><main><h1>Page ${name}</h1><p>This page lives at ${name}.</p></main></body></html>`;
}
