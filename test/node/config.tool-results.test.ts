/** proxy.retire_tool_results and proxy.tool_result_min_chars (docs/configuration.md): defaults, bounds, refusals naming the key. */
import { describe, expect, it } from "vitest";
import { loadConfig, publicConfig } from "../../shared/config/config.load";
import { configRefusal, proxySettings } from "../support/config.support";

const proxy = proxySettings;
const refusal = configRefusal;

describe("old tool results retired (opt-in)", () => {
  it("are off by default, with candidates over 8,192 characters", () => {
    expect(proxy({})).toMatchObject({ retire_tool_results: false, tool_result_min_chars: 8_192 });
  });

  it("read a flat variable or a table", () => {
    expect(proxy({ PROXY_RETIRE_TOOL_RESULTS: "true", PROXY_TOOL_RESULT_MIN_CHARS: "20000" })).toMatchObject({
      retire_tool_results: true,
      tool_result_min_chars: 20_000,
    });
    expect(proxy({ proxy: { retire_tool_results: true } }).retire_tool_results).toBe(true);
  });

  it("bound the size into 1,024..1,000,000", () => {
    expect(proxy({ PROXY_TOOL_RESULT_MIN_CHARS: "10" }).tool_result_min_chars).toBe(1_024);
    expect(proxy({ PROXY_TOOL_RESULT_MIN_CHARS: "99999999" }).tool_result_min_chars).toBe(1_000_000);
  });

  it.each([
    [{ PROXY_RETIRE_TOOL_RESULTS: "maybe" }, "proxy.retire_tool_results"],
    [{ PROXY_TOOL_RESULT_MIN_CHARS: "lots" }, "proxy.tool_result_min_chars"],
    [{ proxy: { tool_result_min_char: 9000 } }, "did you mean proxy.tool_result_min_chars"],
  ])("refuses %j, naming the key", (env, key) => {
    expect(refusal(env)).toContain(key);
  });

  it("show in GET /v1/config beside the other proxy settings", () => {
    const shown = publicConfig(loadConfig({ PROXY_RETIRE_TOOL_RESULTS: "on" })) as any;
    expect(shown.proxy).toMatchObject({ retire_tool_results: true, tool_result_min_chars: 8_192 });
  });
});
