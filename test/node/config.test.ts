/** docs/configuration.md and the README's table, key by key: defaults, clamps, fallbacks, layers, and errors that name the key. */
import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, flatName, loadConfig, publicConfig } from "../../shared/config/config.load";
import { AppError } from "../../shared/http/errors";

const config = (env: Record<string, unknown>) => loadConfig(env).config;

describe("defaults", () => {
  it("match the README's table", () => {
    const c = config({});
    expect(c.web).toMatchObject({
      cache_enabled: true,
      cache_ttl_minutes: 20,
      cache_exempt_hosts: [],
      search_provider: "auto",
      extract_provider: "auto",
      keyless_fallback: true,
      extract_timeout_seconds: 60,
      max_page_chars: 2_000_000,
      char_limit: 15_000,
    });
    expect(c.vision).toEqual({
      embed_target_bytes: 262_144,
      max_calls_per_image: null,
      max_long_edge: 1568,
      max_input_pixels: 14_745_600,
    });
    expect(c.security).toEqual({
      website_blocklist: [],
      allow_private_urls: false,
      dns_resolver_url: "https://cloudflare-dns.com/dns-query",
      allow_anonymous: false,
      allowed_origins: [],
    });
    expect(c.auxiliary.vision).toEqual({ base_url: null, model: null });
  });

  it("names every key's flat variable in upper snake case", () => {
    expect(flatName("web.cache_ttl_minutes")).toBe("WEB_CACHE_TTL_MINUTES");
    expect(flatName("auxiliary.vision.base_url")).toBe("AUXILIARY_VISION_BASE_URL");
    expect(CONFIG_KEYS).toContain("providers.tavily_base_url");
  });
});

describe("clamps and fallbacks", () => {
  it.each([
    ["0", 1],
    ["-5", 1],
    ["abc", 20],
    ["5000", 1440],
    ["60", 60],
    [45, 45],
  ])("web.cache_ttl_minutes %j → %i", (value, expected) => {
    expect(config({ WEB_CACHE_TTL_MINUTES: value }).web.cache_ttl_minutes).toBe(expected);
  });

  it.each([
    ["1.5", 262_144],
    [true, 262_144],
    ["true", 262_144],
    ["10", 65_536],
    ["1000000000", 4_194_304],
    ["1048576", 1_048_576],
  ])("vision.embed_target_bytes %j → %i", (value, expected) => {
    expect(config({ VISION_EMBED_TARGET_BYTES: value }).vision.embed_target_bytes).toBe(expected);
  });

  it("clamps web.char_limit into 2000..500000 and web.extract_timeout_seconds into 1..300", () => {
    expect(config({ WEB_CHAR_LIMIT: "10" }).web.char_limit).toBe(2000);
    expect(config({ WEB_CHAR_LIMIT: "9999999" }).web.char_limit).toBe(500_000);
    expect(config({ WEB_EXTRACT_TIMEOUT_SECONDS: "0" }).web.extract_timeout_seconds).toBe(1);
    expect(config({ WEB_EXTRACT_TIMEOUT_SECONDS: "900" }).web.extract_timeout_seconds).toBe(300);
  });

  it("reads vision.max_calls_per_image as unset, N, or 0 = unlimited", () => {
    expect(config({}).vision.max_calls_per_image).toBeNull();
    expect(config({ VISION_MAX_CALLS_PER_IMAGE: "2" }).vision.max_calls_per_image).toBe(2);
    expect(config({ VISION_MAX_CALLS_PER_IMAGE: "0" }).vision.max_calls_per_image).toBe(0);
  });

  it("reads lists from TOML arrays and comma-separated variables, lower-cased", () => {
    expect(
      config({ security: { website_blocklist: ["Evil.Example", "*.ads.test"] } }).security.website_blocklist,
    ).toEqual(["evil.example", "*.ads.test"]);
    expect(config({ WEB_CACHE_EXEMPT_HOSTS: " a.example , B.example ,," }).web.cache_exempt_hosts).toEqual([
      "a.example",
      "b.example",
    ]);
    expect(config({ security: { website_blocklist: [" X.Example ", "", 7] } }).security.website_blocklist).toEqual([
      "x.example",
      "7",
    ]);
    expect(config({ WEB_CACHE_EXEMPT_HOSTS: "" }).web.cache_exempt_hosts).toEqual([]);
  });

  it("refuses a list that is neither an array nor a string, naming the key and what it expects", () => {
    expect(() => loadConfig({ web: { cache_exempt_hosts: { a: 1 } } })).toThrow(
      "Configuration key web.cache_exempt_hosts is unusable: expected a list or a comma-separated string. ",
    );
    expect(() => loadConfig({ security: { allowed_origins: 42 } })).toThrow(
      "Configuration key security.allowed_origins is unusable: expected a list or a comma-separated string of origins. ",
    );
    expect(() => loadConfig({ SECURITY_ALLOWED_ORIGINS: "https://ok.example, ftp-nope, also bad" })).toThrow(
      'unusable: expected an origin such as https://app.example.com, got "ftp-nope". ',
    );
  });

  it("reads security.allowed_origins as origins, from TOML arrays and comma-separated variables", () => {
    expect(
      config({ security: { allowed_origins: ["https://App.Example.com/", "http://localhost:6274"] } }).security
        .allowed_origins,
    ).toEqual(["https://app.example.com", "http://localhost:6274"]);
    expect(
      config({ SECURITY_ALLOWED_ORIGINS: " https://a.example , https://b.example:8443/path " }).security
        .allowed_origins,
    ).toEqual(["https://a.example", "https://b.example:8443"]);
    for (const bad of ["app.example.com", "file:///etc/passwd", "*"]) {
      expect(() => loadConfig({ SECURITY_ALLOWED_ORIGINS: bad }), bad).toThrow(/security\.allowed_origins/);
    }
  });

  it("reads booleans from TOML and from strings", () => {
    expect(config({ web: { cache_enabled: false } }).web.cache_enabled).toBe(false);
    expect(config({ WEB_CACHE_ENABLED: "0" }).web.cache_enabled).toBe(false);
    expect(config({ SECURITY_ALLOW_ANONYMOUS: "yes" }).security.allow_anonymous).toBe(true);
  });
});

describe("layers", () => {
  it("lets a flat variable win over a section table, and a table win over the default", () => {
    expect(config({ web: { cache_ttl_minutes: 30 } }).web.cache_ttl_minutes).toBe(30);
    expect(config({ web: { cache_ttl_minutes: 30 }, WEB_CACHE_TTL_MINUTES: "90" }).web.cache_ttl_minutes).toBe(90);
  });

  it("takes nested tables ([vars.auxiliary.vision]) and JSON-string tables", () => {
    expect(
      config({ auxiliary: { vision: { base_url: "http://127.0.0.1:9/v1/", model: "m" } } }).auxiliary.vision,
    ).toEqual({ base_url: "http://127.0.0.1:9/v1", model: "m" });
    expect(config({ web: '{"char_limit": 3000}' }).web.char_limit).toBe(3000);
  });

  it("accepts the duckduckgo alias for the keyless base URL", () => {
    expect(config({ PROVIDERS_DUCKDUCKGO_BASE_URL: "http://127.0.0.1:5/ddg" }).providers.keyless_base_url).toBe(
      "http://127.0.0.1:5/ddg",
    );
  });
});

describe("unusable values", () => {
  it.each([
    ["WEB_SEARCH_PROVIDER", "bing", "web.search_provider"],
    ["WEB_EXTRACT_PROVIDER", "scrapy", "web.extract_provider"],
    ["WEB_CACHE_ENABLED", "maybe", "web.cache_enabled"],
    ["PROVIDERS_TAVILY_BASE_URL", "not a url", "providers.tavily_base_url"],
    ["VISION_MAX_CALLS_PER_IMAGE", "-1", "vision.max_calls_per_image"],
    ["WEB_CHAR_LIMIT", "lots", "web.char_limit"],
  ])("%s=%s is a 500 config_error naming %s", (name, value, key) => {
    try {
      loadConfig({ [name]: value });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(500);
      expect((error as AppError).code).toBe("config_error");
      expect((error as AppError).message).toContain(key);
      expect((error as AppError).message).toContain(value);
    }
  });
});

describe("keys that name no setting", () => {
  const refusal = (env: Record<string, unknown>) => {
    try {
      loadConfig(env);
    } catch (error) {
      expect((error as AppError).code).toBe("config_error");
      return (error as AppError).message;
    }
    return null;
  };

  it.each([
    ["a key of a section table", { web: { cache_tll_minutes: 60 } }, "web.cache_tll_minutes", "web.cache_ttl_minutes"],
    [
      "a key of a nested table",
      { auxiliary: { vision: { modle: "llava" } } },
      "auxiliary.vision.modle",
      "auxiliary.vision.model",
    ],
    [
      "a key of a JSON-string table",
      { proxy: '{"strategy": "cost", "timout_seconds": 30}' },
      "proxy.timout_seconds",
      "proxy.timeout_seconds",
    ],
    ["a table one letter off a section", { webb: { cache_ttl_minutes: 60 } }, "webb", "web"],
    [
      "a flat variable with a section's prefix",
      { WEB_SERCH_PROVIDER: "brave" },
      "WEB_SERCH_PROVIDER",
      "WEB_SEARCH_PROVIDER",
    ],
  ])("refuses %s, naming it and the setting meant: %j", (_, env, given, meant) => {
    const message = refusal(env);
    expect(message).toContain(`${given} is not a setting (did you mean ${meant}?)`);
  });

  it("says where a pricing table's JSON text stops being JSON", () => {
    expect(refusal({ PRICING_MODELS: '{"my-model": {"input": 1, "output": 2},}' })).toContain(
      "or its JSON text (not JSON from character 40)",
    );
  });

  it("names an unknown key of a table with no setting near it, without a guess", () => {
    expect(refusal({ security: { something_else: true } })).toContain("security.something_else is not a setting, so");
  });

  it("leaves alone flat variables far from every setting, and tables that are not sections: another program's", () => {
    expect(
      refusal({
        WEB_CONCURRENCY: "4",
        PROXY_URL: "http://p",
        HOSTNAME: "h",
        CACHE: { get() {} },
        LEDGER: {},
        other: { a: 1 },
      }),
    ).toBeNull();
    expect(refusal({ pricing: { models: { "my-model": { input: 1, output: 2 } } } })).toBeNull();
    // Notes and schema references in a config.json: "_comment", "$schema".
    expect(
      refusal({ $schema: "./schema.json", web: { _comment: "an hour for the demo", cache_ttl_minutes: 60 } }),
    ).toBeNull();
  });
});

describe("secrets", () => {
  it("are read from the environment and shown only as set or null", () => {
    const loaded = loadConfig({ TAVILY_API_KEY: "tavily-secret-value", API_TOKENS: "a,b", EXA_API_KEY: "  " });
    expect(loaded.secrets.TAVILY_API_KEY).toBe("tavily-secret-value");
    const shown = publicConfig(loaded);
    expect(shown.secrets).toMatchObject({ TAVILY_API_KEY: "set", API_TOKENS: "set", EXA_API_KEY: null });
    expect(JSON.stringify(shown)).not.toContain("tavily-secret-value");
  });

  it("are not shown inside a URL either: a base URL's user-info or a key in its query", () => {
    const loaded = loadConfig({
      PROVIDERS_SEARXNG_BASE_URL: "https://ops:hunter2-pass@searx.example.com/search",
      AUXILIARY_VISION_BASE_URL: "https://llm.example.com/v1?api_key=sk-live-0123456789abcdef0123",
    });
    const shown = publicConfig(loaded) as any;
    expect(shown.providers.searxng_base_url).toBe("https://[redacted]@searx.example.com/search");
    expect(shown.auxiliary.vision.base_url).toBe("https://llm.example.com/v1?[redacted]");
    expect(JSON.stringify(shown)).not.toMatch(/hunter2|sk-live/);
    // The service itself still uses them as configured.
    expect(loaded.config.providers.searxng_base_url).toContain("ops:hunter2-pass@");
    expect(shown.providers.tavily_base_url).toBe(loaded.config.providers.tavily_base_url);
  });

  it("are never taken from a wrangler.toml table: one there is refused as no setting, its value never shown", () => {
    expect(() => loadConfig({ web: { TAVILY_API_KEY: "from-toml" } })).toThrow(/web.TAVILY_API_KEY is not a setting/);
    expect(() => loadConfig({ web: { TAVILY_API_KEY: "from-toml" } })).not.toThrow(/from-toml/);
  });
});
