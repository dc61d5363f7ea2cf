/** The proxy's exposure settings (docs/proxy.md, "What reaches the provider"): read, checked, and refused with the key named. */
import { describe, expect, it } from "vitest";
import { configRefusal, proxySettings } from "../support/config.support";

const proxy = proxySettings;
const refusal = configRefusal;

describe("proxy.forward_headers and proxy.allowed_paths", () => {
  it("default to nothing more than the built-in lists", () => {
    expect(proxy({})).toMatchObject({ forward_headers: [], allowed_paths: [] });
  });

  it("read a flat variable or a table, lower-casing header names and dropping a trailing slash", () => {
    expect(proxy({ PROXY_FORWARD_HEADERS: "CF-AIG-Metadata, x-team-*" }).forward_headers).toEqual([
      "cf-aig-metadata",
      "x-team-*",
    ]);
    expect(proxy({ proxy: { allowed_paths: ["/v1/files/", "/v1/messages/batches"] } }).allowed_paths).toEqual([
      "/v1/files",
      "/v1/messages/batches",
    ]);
  });

  it.each(["authorization", "X-Api-Key", "api-key", "cookie", "host", "connection", "x-service-token", "bad name"])(
    "refuses %s as a header to forward, naming the key",
    (name) => {
      expect(refusal({ PROXY_FORWARD_HEADERS: name })).toContain("proxy.forward_headers");
    },
  );

  it.each(["v1/files", "/v1/../admin", "/v1/%2e%2e", "/v1//files", "/"])(
    "refuses %s as a path, naming the key",
    (path) => {
      expect(refusal({ PROXY_ALLOWED_PATHS: path })).toContain("proxy.allowed_paths");
    },
  );
});
