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
  };
}

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
  if (readMarkers(query).empty) return [];
  const slug = slugOf(query);
  const results: FakeResult[] = [];
  for (let n = from + 1; n <= Math.min(from + count, RESULTS_PER_QUERY); n++) {
    results.push({
      n,
      title: `Result ${n} for ${query}`,
      url: `https://example.com/${slug}/${n}`,
      snippet: `Snippet ${n}: what the web says about ${query}.`,
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

const WINDOWS_1252_EXTRAS: Record<number, number> = { 0x20ac: 0x80, 0x201c: 0x93, 0x201d: 0x94, 0x2018: 0x91, 0x2019: 0x92, 0x2013: 0x96, 0x2014: 0x97 };

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
