/**
 * The emulator's own contract: the control API, the markers and the provider shapes other test
 * suites rely on. If these drift, every suite using the emulator tests the wrong thing.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMULATOR_API_KEY, type EmulatorCall, type RunningEmulator, startEmulator } from "../emulator/server";
import { postJson, uniqueToken } from "../support/emulator-client";

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const token = () => uniqueToken("emu");

const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  postJson(`${emulator.url}${path}`, body, headers);

async function calls(query: string): Promise<{ count: number; calls: EmulatorCall[] }> {
  return (await fetch(`${emulator.url}/__calls?${query}`)).json() as Promise<{ count: number; calls: EmulatorCall[] }>;
}

describe("control API", () => {
  it("counts calls per provider whose query contains a token, recording count and auth but never the key", async () => {
    const tok = token();
    await post(
      "/tavily/search",
      { query: `a ${tok}`, max_results: 7 },
      { authorization: `Bearer ${EMULATOR_API_KEY}` },
    );
    await post("/tavily/search", { query: `b ${tok}`, max_results: 3 });
    await fetch(`${emulator.url}/brave/res/v1/web/search?q=${tok}&count=5`);
    const tavily = await calls(`provider=tavily&contains=${tok}`);
    expect(tavily.count).toBe(2);
    expect(tavily.calls.map((c) => [c.query, c.count, c.has_key, c.key_ok])).toEqual([
      [`a ${tok}`, 7, true, true],
      [`b ${tok}`, 3, false, false],
    ]);
    expect((await calls(`contains=${tok}`)).count).toBe(3);
    expect(JSON.stringify(await calls(`contains=${tok}`))).not.toContain(EMULATOR_API_KEY);
  });

  it("records extract calls by URL", async () => {
    const tok = token();
    await post("/firecrawl/v1/scrape", { url: `https://example.com/${tok}`, formats: ["markdown"] });
    const recorded = await calls(`provider=firecrawl&contains=${tok}`);
    expect(recorded.calls[0]!.url).toBe(`https://example.com/${tok}`);
  });

  it("reset clears calls and DNS answers", async () => {
    const own = await startEmulator();
    try {
      await fetch(`${own.url}/searxng/search?q=x&format=json`);
      await fetch(`${own.url}/__dns`, {
        method: "POST",
        body: JSON.stringify({ name: "reset.test", A: ["93.184.216.34"] }),
      });
      expect(((await (await fetch(`${own.url}/__calls`)).json()) as { count: number }).count).toBe(1);
      expect((await fetch(`${own.url}/__reset`, { method: "POST" })).status).toBe(200);
      expect(((await (await fetch(`${own.url}/__calls`)).json()) as { count: number }).count).toBe(0);
      const answer = (await (await fetch(`${own.url}/dns-query?name=reset.test&type=A`)).json()) as { Status: number };
      expect(answer.Status).toBe(3);
    } finally {
      await own.close();
    }
  });
});

describe("markers", () => {
  it("[fail:N] answers with that status", async () => {
    expect((await post("/exa/search", { query: `x [fail:503] ${token()}` })).status).toBe(503);
    expect((await fetch(`${emulator.url}/pages/thing[fail:404]`)).status).toBe(404);
  });

  it("[slow:N] delays the answer", async () => {
    const started = Date.now();
    const res = await post("/firecrawl/v1/search", { query: `x [slow:300] ${token()}`, limit: 1 });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("[empty] gives zero results and [badjson] a non-JSON 200", async () => {
    const empty = (await (await post("/tavily/search", { query: `x [empty] ${token()}` })).json()) as {
      results: unknown[];
    };
    expect(empty.results).toEqual([]);
    const bad = await post("/tavily/search", { query: `x [badjson] ${token()}` });
    expect(bad.status).toBe(200);
    await expect(bad.json()).rejects.toThrow();
  });

  it("[malformed:KIND] answers a 200 that breaks the documented shape (HTML for keyless)", async () => {
    const nul = await post("/tavily/search", { query: `x [malformed:results-null] ${token()}` });
    expect(nul.status).toBe(200);
    expect(await nul.json()).toEqual({ results: null });
    expect(
      await (
        await post("/exa/search", { query: `x [malformed:empty-object] ${token()}` }, { "x-api-key": EMULATOR_API_KEY })
      ).json(),
    ).toEqual({});
    const keyless = await fetch(`${emulator.url}/keyless/html/`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `q=${encodeURIComponent(`x [malformed:error] ${token()}`)}`,
    });
    const html = await keyless.text();
    expect(html).not.toContain("result__a");
    expect(html).not.toContain("no-results");
  });

  it("[challenge:VENDOR] serves the bot wall with its status to direct fetches, and as the readers render it", async () => {
    const page = await fetch(`${emulator.url}/pages/wall/[challenge:cloudflare]/${token()}`);
    expect(page.status).toBe(403);
    expect(await page.text()).toContain("<title>Just a moment...</title>");
    const scraped = (await (
      await post("/firecrawl/v1/scrape", { url: `https://docs.example.com/[challenge:perimeterx]/${token()}` })
    ).json()) as any;
    expect(scraped.data.metadata).toMatchObject({ title: "Access to this page has been denied", statusCode: 403 });
    const contact = await fetch(`${emulator.url}/pages/contact`);
    expect(contact.status).toBe(200);
    expect(await contact.text()).toContain("g-recaptcha");
  });

  it("[auth] needs the emulator key", async () => {
    const query = `x [auth] ${token()}`;
    expect((await post("/tavily/search", { query })).status).toBe(401);
    expect((await post("/tavily/search", { query }, { authorization: "Bearer nope" })).status).toBe(401);
    expect((await post("/tavily/search", { query }, { authorization: `Bearer ${EMULATOR_API_KEY}` })).status).toBe(200);
    expect((await post("/exa/search", { query }, { "x-api-key": EMULATOR_API_KEY })).status).toBe(200);
  });
});

describe("provider shapes honour the requested count", () => {
  it("tavily max_results (0..20)", async () => {
    const body = (await (await post("/tavily/search", { query: "q", max_results: 12 })).json()) as {
      results: { title: string; url: string; content: string }[];
    };
    expect(body.results).toHaveLength(12);
    expect(body.results[11]).toMatchObject({
      title: "Result 12 for q",
      url: "https://example.com/q/12",
      content: "Snippet 12: what the web says about q.",
    });
    expect((await post("/tavily/search", { query: "q", max_results: 21 })).status).toBe(400);
  });

  it("brave count and page offset", async () => {
    const res = await fetch(`${emulator.url}/brave/res/v1/web/search?q=paging&count=20&offset=4`);
    const body = (await res.json()) as {
      query: { more_results_available: boolean };
      web: { results: { url: string }[] };
    };
    expect(body.web.results.map((r) => r.url.split("/").pop())).toEqual(
      Array.from({ length: 20 }, (_, i) => String(81 + i)),
    );
    expect(body.query.more_results_available).toBe(false);
    expect((await fetch(`${emulator.url}/brave/res/v1/web/search?q=x&count=21`)).status).toBe(422);
  });

  it("exa numResults, firecrawl limit, searxng pages of 10", async () => {
    const exa = (await (
      await post("/exa/search", { query: "q", numResults: 33, contents: { text: true } })
    ).json()) as { results: { text?: string }[] };
    expect(exa.results).toHaveLength(33);
    expect(exa.results[0]!.text).toBe("Snippet 1: what the web says about q.");
    const firecrawl = (await (await post("/firecrawl/v1/search", { query: "q", limit: 4 })).json()) as {
      success: boolean;
      data: unknown[];
    };
    expect(firecrawl).toMatchObject({ success: true });
    expect(firecrawl.data).toHaveLength(4);
    const searx = (await (await fetch(`${emulator.url}/searxng/search?q=q&format=json&pageno=3`)).json()) as {
      results: { url: string }[];
    };
    expect(searx.results.map((r) => r.url.split("/").pop())).toEqual(
      Array.from({ length: 10 }, (_, i) => String(21 + i)),
    );
  });

  it("keyless answers an HTML results page with redirect links", async () => {
    const form = await fetch(`${emulator.url}/keyless/html/`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "q=ducks",
    });
    expect(form.headers.get("content-type")).toContain("text/html");
    const html = await form.text();
    expect(html).toContain("//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fducks%2F1");
    expect(html.match(/class="result__a"/g)).toHaveLength(31);
  });
});

describe("extract APIs", () => {
  it("tavily extract reports [failed] URLs in failed_results", async () => {
    const body = (await (
      await post("/tavily/extract", { urls: ["https://a.example/ok", "https://a.example/[failed]"] })
    ).json()) as {
      results: { url: string; raw_content: string }[];
      failed_results: { url: string }[];
    };
    expect(body.results.map((r) => r.url)).toEqual(["https://a.example/ok"]);
    expect(body.results[0]!.raw_content).toContain("# Page at https://a.example/ok");
    expect(body.failed_results.map((r) => r.url)).toEqual(["https://a.example/[failed]"]);
  });

  it("jina reads the URL from the path and answers JSON when asked", async () => {
    const res = await fetch(`${emulator.url}/jina/https://example.com/doc?a=1`, {
      headers: { accept: "application/json" },
    });
    const body = (await res.json()) as { data: { url: string; title: string; content: string } };
    expect(body.data.url).toBe("https://example.com/doc?a=1");
    expect(body.data.title).toBe("Page at https://example.com/doc?a=1");
  });
});

describe("auxiliary vision chat completions", () => {
  it("records the request and describes the image it received", async () => {
    const tok = token();
    const dataUrl = `data:image/jpeg;base64,${"A".repeat(1000)}`;
    const res = await post(
      "/openai/v1/chat/completions",
      {
        model: "emu-vision-1",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: `What is misaligned? ${tok}` },
              { type: "image_url", image_url: { url: dataUrl } },
            ],
          },
        ],
      },
      { authorization: `Bearer ${EMULATOR_API_KEY}` },
    );
    const body = (await res.json()) as { choices: { message: { content: string } }[]; model: string };
    expect(body.model).toBe("emu-vision-1");
    expect(body.choices[0]!.message.content).toContain(
      `image/jpeg image as a data URL of ${dataUrl.length} characters`,
    );
    const chat = (await (await fetch(`${emulator.url}/__chat?contains=${tok}`)).json()) as {
      count: number;
      requests: Record<string, unknown>[];
    };
    expect(chat.count).toBe(1);
    expect(chat.requests[0]).toMatchObject({
      model: "emu-vision-1",
      image_data_url_length: dataUrl.length,
      media_type: "image/jpeg",
      question: `What is misaligned? ${tok}`,
      has_key: true,
    });
  });
});

describe("DNS over HTTPS", () => {
  it("answers configured names, NODATA for a missing type, NXDOMAIN otherwise", async () => {
    const name = `${token()}.test`;
    await post("/__dns", { name: `${name.toUpperCase()}.`, A: ["93.184.216.34"], AAAA: [] });
    const a = (await (
      await fetch(`${emulator.url}/dns-query?name=${name}&type=A`, { headers: { accept: "application/dns-json" } })
    ).json()) as {
      Status: number;
      Answer: { name: string; type: number; data: string }[];
    };
    expect(a.Status).toBe(0);
    expect(a.Answer).toEqual([{ name: `${name}.`, type: 1, TTL: 300, data: "93.184.216.34" }]);
    const aaaa = (await (await fetch(`${emulator.url}/dns-query?name=${name}.&type=AAAA`)).json()) as {
      Status: number;
      Answer?: unknown;
    };
    expect(aaaa).toMatchObject({ Status: 0 });
    expect(aaaa.Answer).toBeUndefined();
    const missing = (await (await fetch(`${emulator.url}/dns-query?name=nope-${name}&type=A`)).json()) as {
      Status: number;
    };
    expect(missing.Status).toBe(3);
  });

  it("can answer a failure status, an HTTP error, or late", async () => {
    const tok = token();
    await post("/__dns", [
      { name: `servfail-${tok}.test`, status: 2 },
      { name: `down-${tok}.test`, httpStatus: 503 },
      { name: `late-${tok}.test`, A: ["1.1.1.1"], delayMs: 250 },
    ]);
    expect(
      ((await (await fetch(`${emulator.url}/dns-query?name=servfail-${tok}.test&type=A`)).json()) as { Status: number })
        .Status,
    ).toBe(2);
    expect((await fetch(`${emulator.url}/dns-query?name=down-${tok}.test&type=A`)).status).toBe(503);
    const started = Date.now();
    await fetch(`${emulator.url}/dns-query?name=late-${tok}.test&type=A`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(230);
    expect((await calls(`provider=dns&contains=${tok}`)).count).toBe(3);
  });
});

describe("test pages", () => {
  it("serves an article, an exact-size page, latin1 bytes, a redirect and an empty body", async () => {
    expect(await (await fetch(`${emulator.url}/pages/article`)).text()).toContain("<h1>Understanding Edge Caches</h1>");

    const huge = await fetch(`${emulator.url}/pages/huge?chars=54321`);
    expect((await huge.text()).length).toBe(54321);

    const latin1 = await fetch(`${emulator.url}/pages/latin1`);
    expect(latin1.headers.get("content-type")).toBe("text/html; charset=windows-1252");
    const bytes = new Uint8Array(await latin1.arrayBuffer());
    expect(bytes.includes(0xe9)).toBe(true);
    expect(new TextDecoder("windows-1252").decode(bytes)).toContain("Café crème");

    const redirect = await fetch(
      `${emulator.url}/pages/redirect?to=${encodeURIComponent("https://example.com/next")}`,
      { redirect: "manual" },
    );
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe("https://example.com/next");

    const empty = await fetch(`${emulator.url}/pages/empty`);
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe("");
  });
});

describe("CLI mode", () => {
  it("prints its URL and the .dev.vars lines for every provider, and serves until killed", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/emulator/server.ts", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
          if (match && /TAVILY_API_KEY=.*\n/.test(out)) resolve(match[0]);
        });
        child.once("exit", (code) => reject(new Error(`emulator exited with ${code}`)));
      });
      expect((await fetch(`${url}/__health`)).status).toBe(200);
      // Nothing left pointing at the internet: the keyless rescue and the DNS check come here too.
      for (const line of [
        `PROVIDERS_KEYLESS_BASE_URL=${url}/keyless`,
        `SECURITY_DNS_RESOLVER_URL=${url}/dns-query`,
        `PROVIDERS_TAVILY_BASE_URL=${url}/tavily`,
      ]) {
        expect(out.split("\n")).toContain(line);
      }
    } finally {
      child.kill("SIGTERM");
    }
  }, 20_000);
});
