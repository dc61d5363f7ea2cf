/**
 * The reader on small pages of our own that reproduce what real documentation sites do: what the
 * author wrote stays (footnotes, TIP boxes, signatures, both flavours of an example), the chrome
 * around it goes (breadcrumbs, language bars, copyright, permalink glyphs, search and sign-up forms),
 * and a page wrapped whole in one <form> (ASP.NET WebForms) reads like any other page.
 */
import { describe, expect, it } from "vitest";
import { htmlToMarkdown, MAX_MARKDOWN_CHARS } from "../../shared/web/reader/html-to-markdown";
import { type ElementNode, MAX_NODES, parseHtml } from "../../shared/web/reader/parse";
import { isChromeLine } from "../../shared/web/reader/select";
import { markdownToText } from "../../shared/web/reader/text";
import { READER_PAGES, scoreReader } from "../fixtures/reader-pages";

const md = (html: string, url = "https://docs.example.org/lib/page.html") => htmlToMarkdown(html, url).markdown;

describe("asides and sidebars inside the content are kept", () => {
  it("keeps Sphinx footnotes and topic boxes (<aside>) inside role=main, drops the page's sidebar aside", () => {
    const page = `<div class="document"><div class="body" role="main">
      <section id="json"><h1>json — JSON encoder</h1>
      <p>JSON is a subset of JavaScript<a class="footnote-reference brackets" href="#id2" role="doc-noteref">1</a>.</p>
      <aside class="topic"><p class="topic-title">Contents</p><p>This topic box explains the encoder defaults at length.</p></aside>
      <aside class="footnote-list brackets"><aside class="footnote brackets" id="id2" role="doc-footnote">
        <span class="label"><a role="doc-backlink" href="#id1">1</a></span>
        <p>As noted in the errata for RFC 7159, JSON permits literal U+2028 and U+2029 characters in strings.</p>
      </aside></aside></section></div></div>
      <aside class="sphinxsidebar"><h3>Navigation</h3><ul><li><a href="/a">Index SIDEBAR_LINKS</a></li><li><a href="/b">Modules</a></li></ul></aside>`;
    const out = md(page);
    expect(out).toContain("As noted in the errata for RFC 7159, JSON permits literal U+2028");
    expect(out).toContain("This topic box explains the encoder defaults at length.");
    expect(out).not.toContain("SIDEBAR_LINKS");
  });

  it("drops an aside of links inside an article (related stories), keeps one of prose", () => {
    const out = md(`<article><h1>Story</h1><p>Body text of the story, long enough to be the story.</p>
      <aside><h4>Related</h4><ul><li><a href="/1">Other story RELATED_LINK</a></li><li><a href="/2">Another story</a></li></ul></aside>
      <aside><p>Editor's note: this story was updated on Monday with the council's reply.</p></aside></article>`);
    expect(out).toContain("Editor's note: this story was updated");
    expect(out).not.toContain("RELATED_LINK");
  });

  it("keeps the Debian handbook's TIP boxes (class sidebar) and drops the site's link sidebar", () => {
    const page = `<body><p id="title"><a class="left" href="/"><img alt="Product Site" src="/logo.png"></a></p>
      <ul class="docnav top"><li class="previous"><a href="prev.html">Prev</a></li><li class="next"><a href="next.html">Next</a></li></ul>
      <div class="section" id="sect.apt-get"><div class="titlepage"><h2 class="title">6.2. aptitude, apt-get, and apt Commands</h2></div>
        <p>APT is a vast project, whose original plans included a graphical interface.</p>
        <div class="sidebar"><div class="titlepage"><p class="title"><strong>TIP</strong> Installing the same selection of packages several times</p></div>
          <p>It can be useful to systematically install the same list of packages on several computers, with dpkg --get-selections.</p></div>
        <p>Package installation is done with apt install package.</p></div>
      <div id="sidebar" class="sidebar"><ul><li><a href="/toc">Table of contents SITE_SIDEBAR</a></li><li><a href="/index">Index</a></li></ul></div></body>`;
    const out = md(page);
    expect(out).toContain("It can be useful to systematically install the same list of packages");
    expect(out).toContain("**TIP** Installing the same selection of packages several times");
    expect(out).not.toContain("SITE_SIDEBAR");
  });
});

describe("small chrome on pages without <main> or <article>", () => {
  it("drops breadcrumbs, the language bar, copyright lines and the footer of an Apache-style page", () => {
    const page = `<body id="manual-page"><div id="page-header"><p class="menu"><a href="/mod/">Modules</a> | <a href="/glossary">Glossary</a></p>
      <p class="apache">Apache HTTP Server Version 2.4</p><img alt="" src="/images/feather.png"></div>
      <div class="up"><a href="./"><img title="&lt;-" alt="&lt;-" src="/images/left.gif"></a></div>
      <div id="path"><a href="http://www.apache.org/">Apache</a> &gt; <a href="http://httpd.apache.org/">HTTP Server</a> &gt; <a href="/docs/">Documentation</a> &gt; <a href="../">Version 2.4</a> &gt; Modules</div>
      <div id="page-content"><div id="preamble"><h1>Apache Module mod_ssl</h1>
        <div class="toplang"><p><span>Available Languages: </span><a href="/en/mod_ssl.html">en</a> | <a href="/fr/mod_ssl.html">fr</a> | <a href="/ja/mod_ssl.html">ja</a></p></div>
        <p>This module provides SSL v3 and TLS v1.x support for the Apache HTTP Server. It relies on OpenSSL to provide the cryptography engine.</p>
        <p>Further details, discussion, and examples are provided in the SSL documentation.</p></div>
        <div class="bottomlang"><p><span>Available Languages: </span><a href="/en/mod_ssl.html">en</a> | <a href="/fr/mod_ssl.html">fr</a></p></div></div>
      <div id="footer"><p class="apache">Copyright 2025 The Apache Software Foundation.<br>Licensed under the <a href="http://www.apache.org/licenses/LICENSE-2.0">Apache License, Version 2.0</a>.</p>
      <p class="menu"><a href="/mod/">Modules</a> | <a href="/glossary">Glossary</a> | <a href="/sitemap">Sitemap</a></p></div></body>`;
    const out = md(page);
    expect(out.startsWith("# Apache Module mod_ssl\n\nThis module provides SSL v3")).toBe(true);
    expect(out).toContain("Further details, discussion, and examples are provided in the SSL documentation.");
    for (const chrome of [
      "Available Languages",
      "Copyright",
      "Apache License",
      "Sitemap",
      "HTTP Server Version",
      "> Modules",
    ])
      expect(out).not.toContain(chrome);
  });

  it("drops a Django-style header (site title link, [Home] | … line) and a tagline, keeps the body", () => {
    const page = `<div id="container"><div id="hd"><h1><a href="../index.html">Django 3.2.25 documentation</a></h1>
      <div id="global-nav"><a title="Home page" href="../index.html">Home</a> | <a href="../contents.html">Table of contents</a> | <a href="../genindex.html">Index</a></div>
      <div class="brand-tagline">Small. Fast. Reliable. Choose any three.</div>
      <p><a href="/download/django.epub">Download the ebook</a></p></div>
      <div id="bd"><div class="yui-b"><div class="yui-g" id="topics-http-urls">
        <div class="section" id="s-url-dispatcher"><h1>URL dispatcher</h1>
        <p>A clean, elegant URL scheme is an important detail in a high-quality web application. Django lets you design URLs however you want.</p>
        <p>See <a href="../ref/urls.html">the URL reference</a> for the full list of path converters and their behaviour.</p></div></div></div></div>
      <div id="ft"><p>© Django Software Foundation and individual contributors.</p></div></div>`;
    // The same page with its header drawn by an anonymous <div>: the lines themselves give it away.
    const anonymousHeader = page.replace('<div id="hd">', '<div class="top">').replace("brand-tagline", "tagline");
    for (const html of [page, anonymousHeader]) {
      const out = md(html);
      expect(out.startsWith("# URL dispatcher\n\nA clean, elegant URL scheme")).toBe(true);
      expect(out).toContain("See [the URL reference](https://docs.example.org/ref/urls.html) for the full list");
      for (const chrome of [
        "Django 3.2.25 documentation",
        "[Home]",
        "Table of contents",
        "Small. Fast.",
        "Download the ebook",
        "Django Software Foundation",
      ]) {
        expect(out).not.toContain(chrome);
      }
    }
  });

  it("keeps a content line that only looks link-heavy when it is prose", () => {
    expect(isChromeLine("[Apache](/) > [HTTP Server](/httpd/) > Modules")).toBe(true);
    expect(isChromeLine("Available Languages: [en](/en) | [es](/es)")).toBe(true);
    expect(isChromeLine("Copyright 2025 Example Inc.")).toBe(true);
    expect(isChromeLine("See [json](/json) and [pickle](/pickle) for the two formats this module reads.")).toBe(false);
    expect(isChromeLine("![diagram](/d.png)")).toBe(false);
  });

  it("never drops the only thing a page says", () => {
    expect(md(`<a href="/intro">Intro</a>`)).toBe("[Intro](https://docs.example.org/intro)");
  });
});

describe("forms: the page itself or a control region", () => {
  const fixture = (prefix: string) => READER_PAGES.find((page) => page.name.startsWith(prefix))!;
  const viewState = (html: string) => /name="__VIEWSTATE" id="__VIEWSTATE" value="([^"]+)"/.exec(html)![1]!;

  it("reads a WebForms article (header to footer in one <form>, view state first) as its article", () => {
    const page = fixture("Annual water quality report");
    const { markdown } = htmlToMarkdown(page.html, page.url);
    const score = scoreReader(page, markdown, markdownToText);
    expect(score.recall).toBeGreaterThanOrEqual(0.95);
    expect(markdown.startsWith("# Annual water quality report 2026\n\nPublished 1 December 2026")).toBe(true);
    expect(markdown).toContain("| Nitrate | 4.1 mg/L | 10 mg/L |");
    expect(score.chromeKept).toEqual([]);
    for (const state of ["__VIEWSTATE", "__EVENTVALIDATION", viewState(page.html).slice(0, 40), "theForm", "WebForm_"])
      expect(markdown).not.toContain(state);
  });

  it("reads a WebForms page laid out in nested tables from its content cell, data table kept as a table", () => {
    const page = fixture("Permit office opening hours");
    const { markdown } = htmlToMarkdown(page.html, page.url);
    expect(scoreReader(page, markdown, markdownToText).recall).toBeGreaterThanOrEqual(0.95);
    expect(markdown.startsWith("# Permit office opening hours\n\nThe permit office at the county building")).toBe(true);
    expect(markdown).toContain(
      "| Day | Counter | Inspections line |\n| --- | --- | --- |\n| Monday to Thursday | 8:00 to 16:30 | 7:30 to 15:00 |",
    );
    for (const chrome of [...page.chrome, viewState(page.html).slice(0, 40)]) expect(markdown).not.toContain(chrome);
  });

  it("reads a layout table it cannot narrow to one cell as blocks, not as a grid", () => {
    const html = `<form id="form1" method="post" action="./Default.aspx"><input type="hidden" name="__VIEWSTATE" value="dDwxNTk2OTk0Mjs7Pg==">
      <table width="100%"><tr><td width="40%"><h2>Office notice</h2><p>The office moves to the new county building on the fifth of January; the old counter closes at noon the day before.</p></td>
      <td><h1>Dog licences</h1><p>Every dog over four months old needs a licence, renewed each year in January at the clerk's counter or by post.</p></td></tr></table></form>`;
    const out = md(html);
    expect(out).toContain("## Office notice\n\nThe office moves to the new county building");
    expect(out).toContain("# Dog licences\n\nEvery dog over four months old needs a licence");
    expect(out).not.toContain("|");
    expect(out).not.toContain("dDwx");
  });

  it("drops a search form in the content's header, a login form and a sign-up in an aside, keeps the article", () => {
    const article = `<p>The harbour ferry timetable changes on Monday: boats leave every twenty minutes from seven until nine, then every forty minutes until midnight.</p>
      <p>Season tickets bought before the change stay valid until they expire, and the night boat keeps its Friday and Saturday runs.</p>`;
    const out =
      md(`<main><header class="page-header"><form action="/search"><label for="q">Search SEARCH_LABEL</label><input id="q" name="q"><button>Go SEARCH_BUTTON</button></form></header>
      <article><h1>Ferry timetable</h1>${article}
      <form class="login" method="post" action="/login"><fieldset><legend>Sign in LOGIN_LEGEND</legend><label>User name</label><input name="user"><label>Password</label><input name="password" type="password" value="hunter2"><a href="/forgot">Forgot your password? LOGIN_LINK</a></fieldset></form>
      <aside><h3>Harbour letter SIGNUP_TITLE</h3><form action="/subscribe"><label>Your email SIGNUP_LABEL</label><input name="email"><button>Subscribe</button></form></aside></article></main>`);
    expect(out).toContain("# Ferry timetable\n\nThe harbour ferry timetable changes on Monday");
    expect(out).toContain("the night boat keeps its Friday and Saturday runs.");
    expect(out).not.toMatch(/SEARCH_|LOGIN_|SIGNUP_|hunter2|User name|Password|Subscribe/);
  });

  it("drops a small form nested in the page's form, and keeps the rows of a form opened inside a table", () => {
    const story =
      "<p>The library stays open late on Thursdays through the winter, with the reading room and the archive both staffed until nine in the evening.</p>".repeat(
        3,
      );
    const nested = md(
      `<form id="aspnetForm" method="post"><div id="content"><h1>Library hours</h1>${story}<form action="/search"><label>Search the catalogue NESTED_FORM</label><input name="q"></form></div></form>`,
    );
    expect(nested).toContain("# Library hours\n\nThe library stays open late on Thursdays");
    expect(nested).not.toContain("NESTED_FORM");
    const inTable = md(
      `<main><p>Opening hours by branch:</p><table><form method="post" action="./Branches.aspx"><tr><th>Branch</th><th>Closes</th></tr><tr><td>Central</td><td>21:00</td></tr></form></table></main>`,
    );
    expect(inTable).toBe("Opening hours by branch:\n\n| Branch | Closes |\n| --- | --- |\n| Central | 21:00 |");
  });

  it("says what a page that is only a form says (a login page), never its input values", () => {
    const out = md(
      `<body><form method="post" action="/login"><h1>Staff sign-in</h1><p>Use the account your department gave you.</p><label>User name</label><input name="user" value="SECRET_VALUE"><button>Sign in</button></form></body>`,
    );
    expect(out).toContain("# Staff sign-in\n\nUse the account your department gave you.");
    expect(out).not.toContain("SECRET_VALUE");
  });
});

describe("headings", () => {
  it("drops permalink glyphs: Sphinx ¶, furo/pydata #, rustdoc §, and styled anchors", () => {
    const out =
      md(`<main><h2 id="make-a-request">Make a Request<a class="headerlink" href="#make-a-request" title="Link to this heading">¶</a></h2>
      <h3>Windows vs. POSIX<a class="headerlink" href="#windows-vs-posix">#</a></h3>
      <h3><a href="#x" class="anchor">§</a>Examples</h3>
      <h4>Options <a href="#options" class="anchor-link"><span aria-hidden="true">🔗</span></a></h4>
      <dl><dt id="json.dump">json.dump(obj)<a class="headerlink" href="#json.dump">¶</a></dt><dd>Serialize obj.</dd></dl>
      <p>Issue <a href="#c-sharp">#</a> stays a word in prose? No: a lone glyph link is never prose.</p></main>`);
    expect(out).toContain("## Make a Request\n");
    expect(out).toContain("### Windows vs. POSIX\n");
    expect(out).toContain("### Examples\n");
    expect(out).toContain("#### Options\n");
    expect(out).toContain("**json.dump(obj)**");
    expect(out).not.toMatch(/[¶§🔗]/u);
  });

  it("keeps rustdoc <summary> signatures as headings, without the version and source links", () => {
    const out = md(
      `<main><section id="main-content" class="content"><h1>Struct <span class="struct">Vec</span></h1>
      <details class="toggle implementors-toggle" open><summary><section id="impl-Vec%3CT%3E" class="impl"><a class="src rightside" href="../src/alloc/vec/mod.rs.html#397">Source</a><a href="#impl-Vec%3CT%3E" class="anchor">§</a><h3 class="code-header">impl&lt;T&gt; <a class="struct" href="struct.Vec.html">Vec</a>&lt;T&gt;</h3></section></summary>
      <div class="impl-items"><details class="toggle method-toggle" open><summary><section id="method.new" class="method"><a class="src rightside" href="../src/alloc/vec/mod.rs.html#420">Source</a><span class="rightside since" title="Stable since Rust version 1.0.0">1.0.0 (const: 1.39.0)</span><a href="#method.new" class="anchor">§</a><h4 class="code-header">pub const fn <a href="#method.new" class="fn">new</a>() -&gt; <a class="struct" href="struct.Vec.html">Vec</a>&lt;T&gt;</h4></section></summary>
      <div class="docblock"><p>Constructs a new, empty <code>Vec&lt;T&gt;</code>.</p></div></details></div></details>
      <details><summary>Expand the example</summary><p>let v = Vec::new();</p></details></section></main>`,
      "https://doc.example.org/std/vec/struct.Vec.html",
    );
    expect(out).toContain("### impl<T> [Vec](https://doc.example.org/std/vec/struct.Vec.html)<T>\n");
    expect(out).toContain(
      "#### pub const fn new() -> [Vec](https://doc.example.org/std/vec/struct.Vec.html)<T>\n\nConstructs a new, empty `Vec<T>`.",
    );
    expect(out).toContain("**Expand the example**");
    for (const clutter of ["Source", "1.0.0", "const: 1.39.0", "§"]) expect(out).not.toContain(clutter);
  });
});

describe("code blocks", () => {
  it("keeps Node's two flavours of one example (ESM and CommonJS in one <pre>) as two fenced blocks", () => {
    const out =
      md(`<main><pre class="with-33-chars"><input class="js-flavor-toggle" type="checkbox" aria-label="Show modern ES modules syntax"><code class="language-js mjs"><span class="hljs-keyword">import</span> { readFile } <span class="hljs-keyword">from</span> <span class="hljs-string">'node:fs/promises'</span>;
<span class="hljs-keyword">await</span> readFile(<span class="hljs-string">'a.txt'</span>);</code><code class="language-js cjs"><span class="hljs-keyword">const</span> { readFile } = <span class="hljs-built_in">require</span>(<span class="hljs-string">'node:fs/promises'</span>);
readFile(<span class="hljs-string">'a.txt'</span>);</code><button class="copy-button">copy</button></pre></main>`);
    expect(out).toBe(
      "```js\nimport { readFile } from 'node:fs/promises';\nawait readFile('a.txt');\n```\n\n```js\nconst { readFile } = require('node:fs/promises');\nreadFile('a.txt');\n```",
    );
  });

  it("keeps two adjacent <pre> blocks apart, and one-line <code> runs inside a <pre> together", () => {
    expect(
      md(
        `<main><pre class="mjs">import a from 'a';\na();</pre><pre class="cjs">const a = require('a');\na();</pre></main>`,
      ),
    ).toBe("```\nimport a from 'a';\na();\n```\n\n```\nconst a = require('a');\na();\n```");
    expect(md(`<main><pre><code>$ npm</code> <code>install</code></pre></main>`)).toBe("```\n$ npm install\n```");
  });
});

describe("character references", () => {
  it("decodes names outside the old common set, in text and in attributes", () => {
    const out =
      md(`<main><p>&lsqb;x&rsqb; &lpar;y&rpar; &ccaron;&cacute; &Zcaron; &NotEqualTilde; &fjlig; &amp &copy 2025 &unknownname;</p>
      <p><a href="/s?a=1&copy=2&amp;lang=cs">search</a> <img src="/i.png" alt="Plze&ncaron;"></p></main>`);
    expect(out).toContain("[x] (y) čć Ž ≂̸ fj & © 2025 &unknownname;");
    expect(out).toContain("[search](https://docs.example.org/s?a=1&copy=2&lang=cs)");
    expect(out).toContain("![Plzeň](https://docs.example.org/i.png)");
  });
});

describe("memory bounded by construction", () => {
  const countNodes = (el: ElementNode): number =>
    el.children.reduce((sum, child) => sum + 1 + (typeof child !== "string" ? countNodes(child) : 0), 0);

  it("stops building the tree at the node budget, and says where it stopped", () => {
    const html = "<p>para <b>bold</b></p>".repeat(10_000);
    const doc = parseHtml(html, 1_000);
    expect(doc.truncated).toBe(true);
    expect(countNodes(doc.root)).toBeLessThanOrEqual(1_000);
    expect(doc.parsedChars).toBeLessThan(html.length / 10);
    expect(parseHtml("<p>small</p>", 1_000)).toMatchObject({ truncated: false, parsedChars: 12 });
  });

  it("builds no nodes for indentation, scripts, SVG or attributes it never reads", () => {
    const doc = parseHtml(
      `<div>\n  <p data-track="${"x".repeat(5_000)}" class="lead">a</p>\n  <svg><path d="M0"/><text>t</text></svg>\n  <script>var s = 1;</script>\n</div>`,
    );
    const div = doc.root.children[0] as ElementNode;
    // The space after the script is kept: between inline content it would be a word break.
    expect(div.children.map((child) => (typeof child !== "string" ? child.tag : "text"))).toEqual([
      "p",
      "script",
      "text",
    ]);
    const p = div.children[0] as ElementNode;
    expect([p.attrs.size, p.attrs.get("class"), p.attrs.get("data-track")]).toEqual([1, "lead", undefined]);
  });

  it("converts a 16 MiB page of dense tags with the tree and the output capped, and says it is not the whole page", () => {
    const html = "<b>x</b>".repeat(2 * 2 ** 20);
    const { markdown, truncated } = htmlToMarkdown(html);
    expect(markdown.length).toBeGreaterThan(100_000);
    expect(markdown.length).toBeLessThanOrEqual(MAX_NODES * 5);
    expect(markdown.length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS);
    expect(truncated).toBe(true);
  });

  it("flags a conversion cut at MAX_MARKDOWN_CHARS, and only a cut one", () => {
    const paragraph = `<p>${"The quick brown fox jumps over the lazy dog. ".repeat(20)}</p>`;
    const over = htmlToMarkdown(
      `<main>${paragraph.repeat(Math.ceil((MAX_MARKDOWN_CHARS * 1.2) / paragraph.length))}</main>`,
    );
    expect(over.truncated).toBe(true);
    expect(over.markdown.length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS * 1.01); // separators are not counted
    const under = htmlToMarkdown(
      `<main>${paragraph.repeat(Math.floor((MAX_MARKDOWN_CHARS * 0.9) / paragraph.length))}</main>`,
    );
    expect(under.truncated).toBe(false);
    expect(under.markdown.length).toBeGreaterThan(MAX_MARKDOWN_CHARS * 0.85);
    expect(htmlToMarkdown("<h1>Small</h1><p>page</p>").truncated).toBe(false);
  });
});
