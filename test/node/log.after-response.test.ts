/**
 * Deno's request log written after the response (shared/log.ts, afterResponseLogger): nothing is
 * written on the request's path, every line still comes out, in order, at its level, and a real
 * Deno process still writes its request line.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { afterResponseLogger } from "../../shared/log";
import { until } from "../support/emulator-client";
import { startDenoOnEmulator } from "../support/deno-service";

afterEach(() => vi.restoreAllMocks());

describe("afterResponseLogger", () => {
  it("writes nothing at once, then every line in order, a run of one level in one console call", async () => {
    const written: Array<[string, string]> = [];
    for (const method of ["log", "warn", "error"] as const)
      vi.spyOn(console, method).mockImplementation((text: unknown) => void written.push([method, String(text)]));
    const log = afterResponseLogger();
    log.info("request", { n: 1 });
    log.info("request", { n: 2 });
    log.warn("request", { n: 3 });
    log.info("request", { n: 4 });
    expect(written).toEqual([]);
    await until(
      async () => written.length === 3,
      () => JSON.stringify(written),
    );
    expect(written.map(([method]) => method)).toEqual(["log", "warn", "log"]);
    const lines = written.flatMap(([, text]) => text.split("\n").map((line) => JSON.parse(line)));
    expect(lines).toEqual([
      { level: "info", event: "request", n: 1 },
      { level: "info", event: "request", n: 2 },
      { level: "warn", event: "request", n: 3 },
      { level: "info", event: "request", n: 4 },
    ]);
  });

  it("takes the fields as they were when logged, and drain writes what waits at once", () => {
    const written: string[] = [];
    vi.spyOn(console, "log").mockImplementation((text: unknown) => void written.push(String(text)));
    const log = afterResponseLogger();
    const fields: Record<string, unknown> = { route: "/v1/web_search" };
    log.info("request", fields);
    fields.route = "changed";
    log.drain();
    expect(written.map((text) => JSON.parse(text))).toEqual([
      { level: "info", event: "request", route: "/v1/web_search" },
    ]);
    log.drain();
    expect(written).toHaveLength(1);
  });
});

describe("Deno's request line", () => {
  it("is still written for a cache hit, with its route and cache status", async () => {
    const stack = await startDenoOnEmulator({ SECURITY_ALLOW_ANONYMOUS: "true" });
    try {
      const search = () =>
        fetch(`${stack.deno.url}/v1/web_search`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": "after-response-hit" },
          body: JSON.stringify({ query: "after response log" }),
        });
      await (await search()).arrayBuffer();
      const hit = await search();
      expect(hit.headers.get("x-cache")).toBe("HIT");
      const line = () =>
        stack.deno
          .output()
          .split("\n")
          .filter((text) => text.startsWith("{"))
          .map((text) => JSON.parse(text))
          .find((entry) => entry.request_id === "after-response-hit" && entry.cache === "hit");
      await until(
        async () => line() !== undefined,
        () => stack.deno.output(),
      );
      expect(line()).toMatchObject({ level: "info", event: "request", route: "/v1/web_search", status: 200 });
    } finally {
      await stack.stop();
    }
  });
});
