import { exports } from "cloudflare:workers";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
it("serves", async () => {
  const res = await exports.default.fetch("http://x/healthz");
  expect(await res.text()).toBe("ok");
  await (env as any).CACHE.put("a", "b");
  expect(await (env as any).CACHE.get("a")).toBe("b");
});
