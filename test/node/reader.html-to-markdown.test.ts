/**
 * The direct extractor's converter on realistic pages: what an agent reads must be the content,
 * correctly decoded, with the page chrome gone, and no input may make it throw or stall.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeHtmlEntities } from "../../shared/web/html-entities";
import { decodeHtmlBody, htmlToMarkdown, markdownToText } from "../../shared/web/reader/html-to-markdown";
import { ARTICLE_HTML, hugePage, latin1PageBytes } from "../emulator/fixtures";

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Configuring the cache | Acme Docs</title>
  <link rel="stylesheet" href="/css/site.css">
  <style>.sidebar { width: 240px }</style>
  <script>document.documentElement.className = "js SECRET_SCRIPT_TEXT";</script>
</head>
<body>
  <!-- build 1234 HIDDEN_COMMENT_TEXT -->
  <a class="skip-link" href="#content">Skip to content</a>
  <header class="site-header">
    <a href="/" class="logo"><img src="/logo.svg" alt="Acme"></a>
    <nav aria-label="Main"><ul><li><a href="/docs/">Docs</a></li><li><a href="/pricing">Pricing NAV_TEXT</a></li></ul></nav>
    <form action="/search"><input name="q" placeholder="Search docs"><button>Search FORM_TEXT</button></form>
  </header>
  <div class="layout">
    <aside class="sidebar"><h3>On this page</h3><ul><li><a href="#ttl">TTL SIDEBAR_TEXT</a></li></ul></aside>
    <main id="content">
      <h1>Configuring the cache</h1>
      <p>The cache keeps answers for <code>web.cache_ttl_minutes</code> minutes. See the
         <a href="../reference/config#ttl">configuration reference</a> for every key.</p>
      <h2 id="ttl">TTL</h2>
      <p>Values are <em>clamped</em> to <strong>1..1440</strong>.</p>
      <pre class="highlight"><code class="language-toml"><span class="k">[vars.web]</span>
cache_ttl_minutes = <span class="m">60</span></code></pre>
      <table>
        <thead><tr><th>Key</th><th>Default</th><th>Rule</th></tr></thead>
        <tbody>
          <tr><td><code>web.cache_enabled</code></td><td>true</td><td>false turns caching off</td></tr>
          <tr><td><code>web.char_limit</code></td><td>15000</td><td>2000..500000 | clamped</td></tr>
        </tbody>
      </table>
      <div class="admonition note"><p>Note: secrets are never cached.</p></div>
    </main>
  </div>
  <footer class="site-footer"><p>&copy; 2025 Acme FOOTER_TEXT</p><a href="/privacy">Privacy</a></footer>
  <script src="/js/app.js"></script>
</body>
</html>`;

describe("htmlToMarkdown on a documentation page", () => {
  const page = htmlToMarkdown(DOCS_PAGE, "https://docs.acme.dev/guides/cache/");

  it("keeps the title, headings, text, inline code and emphasis", () => {
    expect(page.title).toBe("Configuring the cache | Acme Docs");
    expect(page.markdown.startsWith("# Configuring the cache\n\n")).toBe(true);
    expect(page.markdown).toContain("The cache keeps answers for `web.cache_ttl_minutes` minutes.");
    expect(page.markdown).toContain("## TTL");
    expect(page.markdown).toContain("Values are *clamped* to **1..1440**.");
    expect(page.markdown).toContain("Note: secrets are never cached.");
  });

  it("resolves links against the page URL", () => {
    expect(page.markdown).toContain("[configuration reference](https://docs.acme.dev/guides/reference/config#ttl)");
  });

  it("turns the code block into a fenced block with its language", () => {
    expect(page.markdown).toContain("```toml\n[vars.web]\ncache_ttl_minutes = 60\n```");
  });

  it("turns the table into a GFM table with pipes escaped", () => {
    expect(page.markdown).toContain(
      [
        "| Key | Default | Rule |",
        "| --- | --- | --- |",
        "| `web.cache_enabled` | true | false turns caching off |",
        "| `web.char_limit` | 15000 | 2000..500000 \\| clamped |",
      ].join("\n"),
    );
  });

  it("drops scripts, styles, comments, navigation, sidebar, forms, header and footer", () => {
    for (const noise of [
      "SECRET_SCRIPT_TEXT",
      "HIDDEN_COMMENT_TEXT",
      "NAV_TEXT",
      "SIDEBAR_TEXT",
      "FORM_TEXT",
      "FOOTER_TEXT",
      "Skip to content",
      "width: 240px",
      "Pricing",
    ]) {
      expect(page.markdown).not.toContain(noise);
    }
  });

  it("drops chrome even without a <main>, but keeps an article's own header", () => {
    const withoutMain = DOCS_PAGE.replace('<main id="content">', '<div id="content">').replace("</main>", "</div>");
    const md = htmlToMarkdown(withoutMain, "https://docs.acme.dev/").markdown;
    expect(md).toContain("# Configuring the cache");
    for (const noise of ["NAV_TEXT", "SIDEBAR_TEXT", "FOOTER_TEXT", "FORM_TEXT"]) expect(md).not.toContain(noise);

    const article = htmlToMarkdown(
      `<article><header><h1>Post</h1><p>By Ann</p></header><p>Body.</p><footer>Tags: x</footer></article>`,
    ).markdown;
    expect(article).toBe("# Post\n\nBy Ann\n\nBody.\n\nTags: x");
  });

  it("renders the emulator's article page cleanly", () => {
    const { title, markdown } = htmlToMarkdown(ARTICLE_HTML, "https://blog.example.com/posts/edge");
    expect(title).toBe("Understanding Edge Caches — Example Blog");
    expect(markdown).toContain("[cache guide](https://blog.example.com/docs/cache)");
    expect(markdown).toContain("if (ttl > 0) cache.put(key, value);");
    expect(markdown).not.toContain("Archive");
    expect(markdown).not.toContain("analytics");
  });
});

describe("lists", () => {
  it("renders nested unordered and ordered lists with indentation", () => {
    const html = `<ul>
      <li>Install
        <ul><li>npm</li><li>deno
          <ol start="3"><li>add the import</li><li>run it</li></ol>
        </li></ul>
      </li>
      <li>Configure</li>
    </ul>`;
    expect(htmlToMarkdown(html).markdown).toBe(
      ["- Install", "  - npm", "  - deno", "    3. add the import", "    4. run it", "- Configure"].join("\n"),
    );
  });

  it("closes unclosed <li> items the way browsers do", () => {
    expect(htmlToMarkdown("<ol><li>one<li>two<li>three</ol><p>after").markdown).toBe(
      "1. one\n2. two\n3. three\n\nafter",
    );
  });

  it("keeps paragraphs inside an item apart", () => {
    expect(htmlToMarkdown("<ul><li><p>first</p><p>second</p></li></ul>").markdown).toBe("- first\n\n  second");
  });
});

describe("inline content", () => {
  it("handles images, links, breaks and strikethrough", () => {
    const html = `<p>Logo <img src="img/logo.png" alt="Acme logo"> <img src="/spacer.gif" alt="">
      <img src="data:image/png;base64,AAAA" alt="inline chart"> <a href="javascript:void(0)">menu</a>
      <a href="mailto:a@b.example">mail</a> line<br>break <s>old</s></p>`;
    expect(htmlToMarkdown(html, "https://x.example/a/").markdown).toBe(
      "Logo ![Acme logo](https://x.example/a/img/logo.png) inline chart menu [mail](mailto:a@b.example) line\nbreak ~~old~~",
    );
  });

  it("honours <base href> and keeps relative links when no base is known", () => {
    expect(
      htmlToMarkdown(`<base href="https://cdn.example/docs/"><a href="intro">Intro</a>`, "https://x.example/").markdown,
    ).toBe("[Intro](https://cdn.example/docs/intro)");
    expect(htmlToMarkdown(`<a href="/intro">Intro</a>`).markdown).toBe("[Intro](/intro)");
  });

  it("fences inline code that contains backticks", () => {
    expect(htmlToMarkdown("<p>Use <code>a`b</code> here</p>").markdown).toBe("Use ``a`b`` here");
  });

  it("moves spaces outside emphasis markers", () => {
    expect(htmlToMarkdown("<p>a<strong> bold </strong>b<em></em>c</p>").markdown).toBe("a **bold** bc");
  });

  it("renders blockquotes, rules and the title fallback", () => {
    const page = htmlToMarkdown("<h1>Only heading</h1><blockquote><p>one</p><p>two</p></blockquote><hr><p>end</p>");
    expect(page.title).toBe("Only heading");
    expect(page.markdown).toBe("# Only heading\n\n> one\n>\n> two\n\n---\n\nend");
  });
});

describe("entities", () => {
  it("decodes named, numeric and hex references, with windows-1252 for C1 numbers", () => {
    expect(decodeHtmlEntities("caf&eacute; &amp; &lt;b&gt; &#8212; &#x1F600; &#150; &hellip; &nbsp;")).toBe(
      "café & <b> — 😀 – … \u00A0",
    );
    expect(decodeHtmlEntities("&unknown; &#0; &#xD800; AT&T &amp")).toBe("&unknown; \uFFFD \uFFFD AT&T &");
  });

  it("decodes entities in text and titles but not inside code blocks twice", () => {
    const page = htmlToMarkdown("<title>Q&amp;A</title><pre>a &amp;amp; b</pre>");
    expect(page.title).toBe("Q&A");
    expect(page.markdown).toBe("```\na &amp; b\n```");
  });
});

describe("decodeHtmlBody", () => {
  it("honours the charset in the Content-Type header", () => {
    const text = decodeHtmlBody(latin1PageBytes(false), "text/html; charset=windows-1252");
    expect(text).toContain("<title>Café crème</title>");
    expect(text).toContain("A naïve “quoted” price: €5.");
    expect(htmlToMarkdown(text).title).toBe("Café crème");
  });

  it("falls back to <meta charset> when the header has none or an unknown one", () => {
    expect(decodeHtmlBody(latin1PageBytes(true), "text/html")).toContain("Café crème");
    expect(decodeHtmlBody(latin1PageBytes(true), "text/html; charset=x-no-such-charset")).toContain("Café crème");
    expect(decodeHtmlBody(latin1PageBytes(true), null)).toContain("“quoted”");
  });

  it("reads the http-equiv form and other encodings", () => {
    // 日本語 in Shift_JIS.
    const prefix = new TextEncoder().encode(
      `<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"><p>`,
    );
    const bytes = new Uint8Array([...prefix, 0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]);
    expect(decodeHtmlBody(bytes, null)).toContain("<p>日本語");
  });

  it("reads a <meta> as the HTML prescan does: not inside a comment, not from a description's text", () => {
    const bytes = (html: string) => Uint8Array.from([...html].map((c) => c.charCodeAt(0)));
    const cafe = "<p>caf\xc3\xa9</p>"; // é in UTF-8, read byte for byte
    expect(
      decodeHtmlBody(bytes(`<!-- <meta charset="iso-8859-1"> --><meta charset="utf-8">${cafe}`), "text/html"),
    ).toBe('<!-- <meta charset="iso-8859-1"> --><meta charset="utf-8"><p>café</p>');
    const description = '<meta name="description" content="Set charset=windows-1251 in PHP">';
    expect(decodeHtmlBody(bytes(`${description}<meta charset='utf-8'>${cafe}`), "text/html")).toContain("<p>café</p>");
    // content= counts beside http-equiv, whatever the order and quoting of the attributes.
    expect(
      decodeHtmlBody(bytes(`<meta content="text/html; charset=utf-8" HTTP-EQUIV=Content-Type>${cafe}`), null),
    ).toContain("<p>café</p>");
  });

  it("defaults to UTF-8, and a byte-order mark wins over the header", () => {
    const utf8 = new TextEncoder().encode("<p>Crème brûlée</p>");
    expect(decodeHtmlBody(utf8, null)).toBe("<p>Crème brûlée</p>");
    expect(decodeHtmlBody(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8]), "text/html; charset=iso-8859-1")).toBe(
      "<p>Crème brûlée</p>",
    );
  });
});

describe("robustness", () => {
  it("does not throw on malformed HTML", () => {
    const broken = [
      "<div><p>unclosed <b>bold <i>both</div> tail",
      "</p></div></li>stray ends<td>cell</tr>",
      '<a href="unterminated>text',
      "<!-- never closed comment <p>hidden",
      "a < b and c > d, 1<2",
      "<table><td>no rows<td>two</table><ul>text<li>item</ul>",
      "<script>if (a < b) { x = '</div>' }</script><p>after script</p>",
      "<pre><code>unclosed",
      "<<<>>><//><p/><br/><img>",
      "<svg><path d='M0 0'/><text>svg text</text></svg><p>visible</p>",
    ];
    for (const html of broken) expect(() => htmlToMarkdown(html, "https://x.example/")).not.toThrow();
    expect(htmlToMarkdown("a < b and c > d, 1<2").markdown).toBe("a < b and c > d, 1<2");
    expect(htmlToMarkdown("<script>if (a < b) { x = '</div>' }</script><p>after script</p>").markdown).toBe(
      "after script",
    );
    expect(htmlToMarkdown("<svg><path d='M0 0'/><text>svg text</text></svg><p>visible</p>").markdown).toBe("visible");
  });

  it("survives very deep nesting without overflowing the stack", () => {
    const deep = `${"<div>".repeat(50_000)}deep text${"</div>".repeat(50_000)}`;
    expect(htmlToMarkdown(deep).markdown).toBe("deep text");
    const deepLists = `${"<ul><li>".repeat(5_000)}leaf`;
    expect(() => htmlToMarkdown(deepLists)).not.toThrow();
  });

  const completeTag = fc.constantFrom(
    "<p>",
    "</p>",
    "<div>",
    "</div>",
    "<ul>",
    "<li>",
    "</ul>",
    "<ol>",
    "<table>",
    "<tr>",
    "<td>",
    "</table>",
    "<pre>",
    "</pre>",
    "<a href='/x'>",
    "</a>",
    "<b>",
    "</i>",
    "<br>",
    "<!-- c -->",
    "<h2>",
    "&amp;",
    "&#x",
    "<blockquote>",
    "<img alt='i' src='/i'>",
  );
  const plainText = fc.string({ maxLength: 8 }).filter((text) => !/[<>"']/.test(text));

  it("never throws, whatever the input", () => {
    const anything = fc.array(
      fc.oneof(completeTag, fc.constantFrom("<", ">", '"', "'", "<!--", "</", "<x"), fc.string({ maxLength: 8 })),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(
        anything,
        (pieces) => typeof htmlToMarkdown(pieces.join(""), "https://x.example/").markdown === "string",
      ),
      { numRuns: 500 },
    );
  });

  it("never lets script text through between complete tags", () => {
    const soup = fc.array(fc.oneof(completeTag, plainText, fc.constant("<script>SCRIPT_BODY</script>")), {
      maxLength: 60,
    });
    fc.assert(
      fc.property(
        soup,
        (pieces) => !htmlToMarkdown(pieces.join(""), "https://x.example/").markdown.includes("SCRIPT_BODY"),
      ),
      { numRuns: 500 },
    );
  });

  // Speed is measured by `npm run bench -- extract` (ms per page, side by side); these two check
  // that big and dense pages convert completely.
  it("converts a 1 MB page completely", () => {
    const { title, markdown } = htmlToMarkdown(hugePage(1_000_000), "https://x.example/");
    expect(title).toBe("Huge page");
    expect(markdown.length).toBeGreaterThan(900_000);
  });

  it("converts a 1 MB page of dense small tags row for row", () => {
    const row = `<tr><td><a href="/r/1">x</a></td><td><b>y</b> <i>z</i></td></tr>`;
    const rows = Math.floor(1_000_000 / row.length);
    const { markdown } = htmlToMarkdown(`<table>${row.repeat(rows)}</table>`, "https://x.example/");
    expect(markdown.split("\n").filter((line) => line.includes("**y** *z*")).length).toBe(rows);
  });
});

describe("line ends", () => {
  it("reads CR LF and a lone CR as the HTML parser does, so a <pre> keeps its lines without a stray CR", () => {
    const { markdown } = htmlToMarkdown(
      "<main><h1>T</h1><pre><code>line one\r\nline two\rline three</code></pre><p>a\r\nb</p></main>",
      "https://a.example/",
    );
    expect(markdown).toBe("# T\n\n```\nline one\nline two\nline three\n```\n\na b");
  });
});

describe("skipped elements", () => {
  it("skips an <svg> with an <svg> inside it whole, not up to the inner one's end", () => {
    const { markdown } = htmlToMarkdown(
      '<main><h1>T</h1><p>before</p><svg viewBox="0 0 10 10"><svg><text>inner</text></svg><text>LEAKED</text><use href="#a"/></svg><p>after</p></main>',
      "https://a.example/",
    );
    expect(markdown).toBe("# T\n\nbefore\n\nafter");
  });
});

describe("hostile runs of whitespace", () => {
  // Each converted in well under the test's 5 s: a lazy regex over a link's or a bold run's text
  // took 11 s on this page (quadratic in a run of no-break spaces, which collapseSpaces keeps).
  it("converts a link and a bold run holding 100,000 no-break spaces (collapsed to one space, as any run)", () => {
    const run = "\u00a0".repeat(100_000);
    const { markdown } = htmlToMarkdown(
      `<main><h1>T</h1><p>Some text <a href="/x">a${run}b</a> and <b>c${run}d</b>.</p></main>`,
      "https://a.example/",
    );
    expect(markdown).toBe("# T\n\nSome text [a b](https://a.example/x) and **c d**.");
  }, 5_000);
});

describe("markdownToText", () => {
  it("strips markdown markers and keeps the words", () => {
    const md = [
      "# Title",
      "",
      "Some **bold**, *italic*, `code`, ~~gone~~ and a [link](https://x.example/a_(b)).",
      "![alt text](https://x.example/i.png)",
      "> quoted",
      "",
      "- item one",
      "1. first",
      "",
      "---",
      "",
      "| a | b |",
      "| --- | --- |",
      "| 1 | 2 \\| 3 |",
      "",
      "```js",
      "const snake_case = a * b;",
      "```",
    ].join("\n");
    expect(markdownToText(md)).toBe(
      [
        "Title",
        "",
        "Some bold, italic, code, gone and a link.",
        "alt text",
        "quoted",
        "",
        "- item one",
        "1. first",
        "",
        "a\tb",
        "1\t2 | 3",
        "",
        "const snake_case = a * b;",
      ].join("\n"),
    );
  });

  it("keeps what is inside code spans as written: no emphasis or escape is read there", () => {
    const { markdown } = htmlToMarkdown(
      "<main><p>Create <code>__init__.py</code>, match <code>\\d+\\.\\d+</code>, glob <code>src/**/*.ts</code>.</p></main>",
      "https://a.example/",
    );
    expect(markdownToText(markdown)).toBe("Create __init__.py, match \\d+\\.\\d+, glob src/**/*.ts.");
    expect(markdownToText("a ``x`y`` b, [see `z`](https://x.example/) and **bold `c` d**")).toBe(
      "a x`y b, see z and bold c d",
    );
  });

  // Each in well under the test's 5 s: the rules scanned to the end of the line from every
  // opener that had no closer (6.7 s for 50,000 '![').
  it.each([
    ["'![' repeated", "![".repeat(50_000)],
    ["'.__a' repeated", ".__a".repeat(25_000)],
    ["'`a``b' repeated", "`a``b".repeat(20_000)],
    ["'[a](u \"' repeated", '[a](u "'.repeat(15_000)],
  ])(
    "reads a hostile line in linear time: %s",
    (_, line) => {
      expect(markdownToText(line).length).toBeGreaterThan(0);
    },
    5_000,
  );

  it("leaves snake_case identifiers alone", () => {
    expect(markdownToText("set web_cache_ttl_minutes and _private_ words")).toBe(
      "set web_cache_ttl_minutes and private words",
    );
  });
});

describe("the page's own markup characters", () => {
  const page =
    "<main><h1># of users</h1><p>2*3*4, _under_, snake_case, ~~kept~~, `tick`, [a](b), ![i](j), C:\\Users, \\*, ~5 and [1]</p>" +
    "<p># not a heading</p><p>&gt; not a quote</p><p>| not | a row |</p><p>---</p>" +
    "<table><tr><th>k</th><th>v</th></tr><tr><td>2*3</td><td>a|b \\| c</td></tr></table>" +
    "<p><a href='https://x.example/'>see [1] *here*</a> <img alt='a*b [c]' src='https://x.example/i.png'></p></main>";

  it("reads back as written in format text: nothing in the text is taken for emphasis, a link, a heading or a table", () => {
    const { markdown, title } = htmlToMarkdown(page, "https://a.example/");
    expect(title).toBe("# of users");
    expect(markdownToText(markdown)).toBe(
      [
        "# of users",
        "",
        "2*3*4, _under_, snake_case, ~~kept~~, `tick`, [a](b), ![i](j), C:\\Users, \\*, ~5 and [1]",
        "",
        "# not a heading",
        "",
        "> not a quote",
        "",
        "| not | a row |",
        "",
        "---",
        "",
        "k\tv",
        "2*3\ta|b \\| c",
        "",
        "see [1] *here* a*b [c]",
      ].join("\n"),
    );
  });

  it("escapes them in markdown, so a markdown reader shows them as text too, and leaves brackets and inner underscores alone", () => {
    const { markdown } = htmlToMarkdown(page, "https://a.example/");
    expect(markdown).toContain("# \\# of users");
    expect(markdown).toContain(
      "2\\*3\\*4, \\_under\\_, snake_case, \\~\\~kept\\~\\~, \\`tick\\`, [a\\](b), ![i\\](j), C:\\Users, \\\\\\*, ~5 and [1]",
    );
    expect(markdown).toContain("\\# not a heading\n\n\\> not a quote\n\n\\| not | a row |\n\n\\---");
    expect(markdown).toContain(
      "[see \\[1\\] \\*here\\*](https://x.example/) ![a\\*b \\[c\\]](https://x.example/i.png)",
    );
  });
});

describe("escapes across runs and cells", () => {
  const text = (body: string) =>
    markdownToText(htmlToMarkdown(`<html><body><main>${body}</main></body></html>`, "https://ex.com/").markdown);

  it("a backslash ending a text run does not escape the markup after it", () => {
    expect(text("<p>foo\\<em>bar</em></p>")).toBe("foo\\bar");
    expect(text("<p>end\\<b>bold</b></p>")).toBe("end\\bold");
    expect(text("<p>C:\\<code>dir</code> here</p>")).toBe("C:\\dir here");
    expect(text("<p>dir\\<a href='/x'>link</a></p>")).toBe("dir\\link");
  });

  it("a table cell that starts with a pipe stays one cell, read back without a backslash", () => {
    const { markdown } = htmlToMarkdown(
      "<table><tr><th>a</th><th>b</th></tr><tr><td>| x</td><td>y</td></tr></table>",
      "https://ex.com/",
    );
    expect(markdown).not.toContain("\\\\|");
    expect(markdownToText(markdown)).toBe("a\tb\n| x\ty");
  });

  // Each in well under the test's 5 s: the rule and closing-hash rules backtracked over the run.
  it.each([
    ["a run of spaces", `${" ".repeat(100_000)}x`],
    ["a dash and a run of spaces", `-${" ".repeat(100_000)}x`],
    ["a heading's hashes after a run of spaces", `# a${" ".repeat(100_000)}#x`],
  ])(
    "reads a 100,000-character line in linear time: %s",
    (_, line) => {
      expect(markdownToText(line).length).toBeGreaterThan(0);
    },
    5_000,
  );
});
