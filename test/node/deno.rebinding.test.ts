/**
 * Time of check against time of use, on Deno (docs/security.md): a name the DNS-over-HTTPS check
 * calls public, while the runtime's own resolver (the emulator's plain DNS, `DENO_DNS_SERVER`)
 * sends it to loopback, is never connected to, through web_extract (direct) and a vision image
 * URL; with private addresses allowed, the page is fetched from the address that was checked, and
 * is never stored (it was reached at a private address).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emulatorVars, startEmulator } from "../emulator/server";
import { type DenoService, startDeno } from "../support/deno-service";
import { postJson } from "../support/emulator-client";
import { type LoopbackSite, startLoopbackSite } from "../support/loopback-site";

let emulator: Awaited<ReturnType<typeof startEmulator>>;
let strict: DenoService;
let open: DenoService;
let site: LoopbackSite;
let sitePort: number;
let hosts: string[];

beforeAll(async () => {
  emulator = await startEmulator();
  site = await startLoopbackSite();
  sitePort = site.port;
  hosts = site.hosts;
  const env = (allowPrivate: boolean) => ({
    ...emulatorVars(emulator.url),
    DENO_KV_PATH: ":memory:",
    DENO_DNS_SERVER: `127.0.0.1:${emulator.dnsPort}`,
    WEB_EXTRACT_PROVIDER: "direct",
    SECURITY_ALLOW_ANONYMOUS: "true",
    SECURITY_ALLOW_PRIVATE_URLS: String(allowPrivate),
  });
  [strict, open] = await Promise.all([startDeno({ env: env(false) }), startDeno({ env: env(true) })]);
}, 90_000);

afterAll(async () => {
  await Promise.all([strict?.stop(), open?.stop()]);
  site?.close();
  await emulator?.close();
});

/** Public over DoH, `plain` on the runtime's resolver. */
async function splitName(label: string, plain: string): Promise<string> {
  const name = `${label}-${Date.now().toString(36)}.example.org`;
  await fetch(`${emulator.url}/__dns`, {
    method: "POST",
    body: JSON.stringify({ name, A: ["93.184.215.14"], plain: { A: [plain] } }),
  });
  return name;
}

const post = (service: DenoService, path: string, body: unknown) => postJson(`${service.url}${path}`, body);

describe("on Deno, the address connected to is the address checked", () => {
  it("refuses a name the runtime resolves to loopback (web_extract over http and https, a vision image URL), and never connects", async () => {
    const name = await splitName("rebind", "127.0.0.1");
    const before = site.connections();
    const extract = (await (
      await post(strict, "/v1/web_extract", {
        urls: [`http://${name}:${sitePort}/page`, `https://${name}:${sitePort}/page`],
      })
    ).json()) as { results: { error?: { code: string; message: string } }[] };
    expect(
      extract.results.map((result) => result.error?.code),
      JSON.stringify(extract),
    ).toEqual(["blocked_private_address", "blocked_private_address"]);
    expect(extract.results[0]!.error!.message).toContain("resolves to 127.0.0.1 on this server's resolver");
    const vision = await post(strict, "/v1/vision_analyze", { image: { url: `http://${name}:${sitePort}/photo.png` } });
    expect(vision.status).toBe(403);
    expect(((await vision.json()) as { error: { code: string } }).error.code).toBe("blocked_private_address");
    expect(site.connections() - before).toBe(0);
  });

  it("with private addresses allowed, fetches the page from the checked address under its own name", async () => {
    const name = await splitName("pinned", "127.0.0.1");
    const response = (await (
      await post(open, "/v1/web_extract", { urls: [`http://${name}:${sitePort}/page`] })
    ).json()) as { results: { content?: string; error?: unknown }[] };
    expect(response.results[0]!.error).toBeUndefined();
    expect(response.results[0]!.content).toContain("reached the loopback site");
    expect(hosts).toContain(`${name}:${sitePort}`);
    // Reached at a private address: never stored, so the next call fetches it again.
    const fetched = hosts.length;
    const again = (await (
      await post(open, "/v1/web_extract", { urls: [`http://${name}:${sitePort}/page`] })
    ).json()) as {
      results: { cached?: boolean }[];
    };
    expect(again.results[0]!.cached).toBe(false);
    expect(hosts.length).toBe(fetched + 1);
  });

  it("keeps a metadata address refused even with private addresses allowed", async () => {
    const name = await splitName("metadata", "169.254.169.254");
    const response = (await (await post(open, "/v1/web_extract", { urls: [`http://${name}/latest/`] })).json()) as {
      results: { error?: { code: string; message: string } }[];
    };
    expect(response.results[0]!.error?.code).toBe("blocked_private_address");
    expect(response.results[0]!.error?.message).toContain("169.254.169.254");
  });
});
