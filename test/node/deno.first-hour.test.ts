/**
 * `npm run dev:deno` as a newcomer meets it: a configuration mistake is printed at start and
 * reported by /healthz naming Deno's own places to fix it; a port already taken is one line with
 * a --port hint, not a stack trace.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DenoService, startDeno } from "../support/deno-service";

let service: DenoService;

beforeAll(async () => {
  // "/" answers whatever the configuration says, so the process can be waited on.
  service = await startDeno({
    env: { SECURITY_ALLOW_ANONYMOUS: "true", DENO_KV_PATH: ":memory:", WEB_SEARCH_PROVIDER: "bing" },
    healthPath: "/",
  });
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

describe("dev:deno", () => {
  it("prints a configuration error at start, and /healthz is a 503 naming the key and Deno's places", async () => {
    const printed = service
      .output()
      .split("\n")
      .filter((line) => line.includes('"config_error"'));
    expect(printed).toHaveLength(1);
    expect(printed[0]).toContain("web.search_provider");
    const response = await fetch(`${service.url}/healthz`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { ok: boolean; error: { code: string; message: string } };
    expect(body.ok).toBe(false);
    expect(body.error.code).toBe("config_error");
    expect(body.error.message).toContain("config.json");
    expect(body.error.message).toContain("WEB_SEARCH_PROVIDER");
    expect(body.error.message).not.toContain("wrangler.toml");
  });

  it("a port already in use is one line with a --port hint", async () => {
    const port = Number(new URL(service.url).port);
    const error = await startDeno({ env: { SECURITY_ALLOW_ANONYMOUS: "true", DENO_KV_PATH: ":memory:" }, port }).then(
      async (second) => {
        await second.stop();
        return null;
      },
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    const output = error!.message;
    expect(output).toContain(`127.0.0.1:${port} is already in use`);
    expect(output).toContain(`npm run dev:deno -- --port ${port + 1}`);
    expect(output).not.toMatch(/AddrInUse|\n\s+at /);
  }, 120_000);

  /** Starts the process on a config.json holding `text`, which must fail: its path and what it printed. */
  const startOnConfig = async (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), "edge-config-")), "config.json");
    writeFileSync(path, text);
    const error = await startDeno({
      env: { SECURITY_ALLOW_ANONYMOUS: "true", DENO_KV_PATH: ":memory:", CONFIG_PATH: path },
    }).then(
      async (service) => {
        await service.stop();
        return null;
      },
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).not.toMatch(/\n\s+at /);
    return { path, printed: error!.message };
  };

  it("a config.json that is not JSON is one line naming the file, not a stack trace", async () => {
    const { path, printed } = await startOnConfig('{"web": {"cache_ttl_minutes": 60,}}');
    expect(printed).toContain(`cannot read the configuration file ${path}`);
  }, 120_000);

  it("a config.json that is not an object of sections is one line saying what it must be", async () => {
    const { path, printed } = await startOnConfig('["web"]');
    expect(printed).toContain(`the configuration file ${path} must be a JSON object of sections`);
  }, 120_000);

  it("a misspelled key in config.json is a configuration error naming it and the setting meant, not ignored", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "edge-config-")), "config.json");
    writeFileSync(path, JSON.stringify({ web: { cache_tll_minutes: 60 } }));
    const typo = await startDeno({
      env: { SECURITY_ALLOW_ANONYMOUS: "true", DENO_KV_PATH: ":memory:", CONFIG_PATH: path },
      healthPath: "/",
    });
    try {
      const response = await fetch(`${typo.url}/healthz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).toContain(
        "web.cache_tll_minutes is not a setting (did you mean web.cache_ttl_minutes?)",
      );
      expect(body.error.message).toContain("config.json");
    } finally {
      await typo.stop();
    }
  }, 120_000);
});
