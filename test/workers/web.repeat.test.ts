/**
 * A repeat of the same web_search request (the same body bytes) is answered from what the isolate
 * made of it before: the validated input, the cache key, and the built answer while the stored
 * answer and its age are the same (docs/speed.md, "The repeated hit"). Everything a caller sees
 * stays as it was: each repeat is checked (Content-Type, origin, token), logged and counted, its
 * Age and X-Request-Id are its own, and a header or a purge that changes the answer is read.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../shared/app/app";
import type { Logger } from "../../shared/ports";
import { workersDeps } from "../../workers/deps";
import { recordingLedger } from "../support/recording-ledger";
import { callJson, expectErrorShape, postJson, providerCalls, testEnv, uniqueToken } from "./helpers";

/** A response's JSON body. */
const answer = async (response: Response): Promise<any> => response.json();

/** An app on an injected clock whose log lines and ledger rows the test reads. */
function recordedApp() {
  const clock = { now: Date.now() };
  const lines: Array<Record<string, unknown>> = [];
  const record =
    (level: string): Logger["info"] =>
    (event, fields) =>
      lines.push({ level, event, ...fields });
  const log: Logger = { info: record("info"), warn: record("warn"), error: record("error") };
  const recorded = recordingLedger();
  const app = createApp(workersDeps(testEnv, { clock: () => clock.now, log, ledger: recorded.ledger }));
  const send = async (body: string, headers: Record<string, string> = {}) => {
    const response = await app.request(
      "/v1/web_search",
      { method: "POST", headers: { "content-type": "application/json", ...headers }, body },
      testEnv,
    );
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return { clock, lines, recorded, send };
}

describe("a repeated web_search hit", () => {
  it("answers each repeat as the first hit did: body, Age, X-Cache, its own X-Request-Id, its log line and count", async () => {
    const { clock, lines, recorded, send } = recordedApp();
    const token = uniqueToken();
    const body = JSON.stringify({ query: `repeat ${token}`, limit: 3 });
    const miss = await send(body);
    expect(JSON.parse(miss.text).cache).toBe("miss");
    clock.now += 1_500;
    const hits = [await send(body), await send(body), await send(body, { "x-request-id": `given-${token}` })];
    const first = JSON.parse(hits[0]!.text);
    expect(first).toMatchObject({ cache: "hit", age: 1, limit: 3, query: `repeat ${token}` });
    expect(first.results).toHaveLength(3);
    for (const hit of hits) {
      expect(hit.status).toBe(200);
      expect(hit.text).toBe(hits[0]!.text);
      expect([hit.headers.get("x-cache"), hit.headers.get("age")]).toEqual(["HIT", "1"]);
      expect(hit.headers.get("content-type")).toBe("application/json; charset=utf-8");
    }
    const ids = hits.map((hit) => hit.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(3);
    expect(ids[2]).toBe(`given-${token}`);
    // A second later the same request's answer says so.
    clock.now += 1_000;
    const older = await send(body);
    expect(JSON.parse(older.text)).toEqual({ ...first, age: 2 });
    expect(older.headers.get("age")).toBe("2");
    const requestLines = lines.filter((line) => line.event === "request");
    expect(requestLines).toHaveLength(5);
    for (const [i, line] of requestLines.slice(1).entries())
      expect(line).toEqual({
        level: "info",
        event: "request",
        request_id: i < 3 ? ids[i] : older.headers.get("x-request-id"),
        method: "POST",
        route: "/v1/web_search",
        status: 200,
        cache: "hit",
        provider: "tavily",
        ms: 0,
      });
    await recorded.flush();
    expect(recorded.totals()).toMatchObject({ requests: 5, hits: 4, provider_calls: 1 });
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("reads what the repeat's headers ask: Cache-Control no-cache and no-store pay again", async () => {
    const { clock, send } = recordedApp();
    const token = uniqueToken();
    const body = JSON.stringify({ query: `repeat headers ${token}` });
    await send(body);
    clock.now += 1_000; // an answer of age 0 is fresh enough even for no-cache
    expect(JSON.parse((await send(body)).text).cache).toBe("hit");
    expect(JSON.parse((await send(body, { "cache-control": "no-cache" })).text).cache).toBe("miss");
    expect(await providerCalls("tavily", token)).toBe(2);
    expect(JSON.parse((await send(body, { "cache-control": "no-store" })).text).cache).toBe("miss");
    expect(await providerCalls("tavily", token)).toBe(3);
    expect(JSON.parse((await send(body)).text).cache).toBe("hit");
    expect(await providerCalls("tavily", token)).toBe(3);
  });

  it("pays again for the repeat of a purged query, then answers its repeats from the new entry", async () => {
    const token = uniqueToken();
    const query = `repeat purge ${token}`;
    const body = JSON.stringify({ query });
    expect((await answer(await postJson("/v1/web_search", body))).cache).toBe("miss");
    expect((await answer(await postJson("/v1/web_search", body))).cache).toBe("hit");
    const purged = await callJson("/v1/cache/purge", { body: { search: [{ query }] } });
    expect(purged.status).toBe(200);
    expect((await answer(await postJson("/v1/web_search", body))).cache).toBe("miss");
    expect((await answer(await postJson("/v1/web_search", body))).cache).toBe("hit");
    expect(await providerCalls("tavily", token)).toBe(2);
  });

  it("checks every repeat: another Content-Type, a foreign page, a missing or wrong token are refused as before", async () => {
    const token = uniqueToken();
    const body = JSON.stringify({ query: `repeat checks ${token}` });
    expect((await postJson("/v1/web_search", body)).status).toBe(200);
    expect((await postJson("/v1/web_search", body)).status).toBe(200);
    const textPlain = await callJson("/v1/web_search", { raw: body, headers: { "content-type": "text/plain" } });
    expect([textPlain.status, expectErrorShape(textPlain.body).code]).toEqual([415, "unsupported_media_type"]);
    const foreign = await postJson("/v1/web_search", body, { origin: "https://elsewhere.example" });
    expect(foreign.status).toBe(403);
    const tokens = { API_TOKENS: `repeat-${token}` };
    expect((await postJson("/v1/web_search", body, {}, tokens)).status).toBe(401);
    expect((await postJson("/v1/web_search", body, { authorization: "Bearer wrong" }, tokens)).status).toBe(401);
    const authorised = await postJson("/v1/web_search", body, { authorization: `Bearer repeat-${token}` }, tokens);
    expect([authorised.status, (await answer(authorised)).cache]).toEqual([200, "hit"]);
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("answers the same body to another provider's configuration from that provider", async () => {
    const token = uniqueToken();
    const body = JSON.stringify({ query: `repeat provider ${token}` });
    expect((await answer(await postJson("/v1/web_search", body))).provider).toBe("tavily");
    expect((await answer(await postJson("/v1/web_search", body))).provider).toBe("tavily");
    const other = await postJson(
      "/v1/web_search",
      body,
      {},
      { WEB_SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "brave-emulator-key" },
    );
    expect([other.status, (await answer(other)).provider]).toEqual([200, "brave"]);
    expect(await providerCalls("brave", token)).toBe(1);
  });
});
