import { defineConfig } from "vitest/config";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { emulatorVars } from "./scripts/local-stack";

const TEST_SITES = /(^|\.)example\.(com|org|net)$/;

async function routeTestNetwork(request: Request, emulator: string): Promise<Response> {
  const url = new URL(request.url);
  const target = TEST_SITES.test(url.hostname)
    ? `${emulator}${url.pathname}${url.search}`
    : url.hostname === "127.0.0.1"
      ? url.href
      : null;
  if (!target) return new Response(`no network in tests: ${url.hostname}`, { status: 502 });
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
  const headers = new Headers(request.headers);
  for (const hop of ["host", "content-length", "transfer-encoding", "connection"]) headers.delete(hop);
  // A failure (a refused port, a connection the emulator closed) reaches the Worker as its fetch's
  // rejection, which the service reports and the tests assert; it is not logged here as well.
  return fetch(target, { method: request.method, headers, body, redirect: "manual" });
}

/**
 * Two projects: `node` (test/node) runs domain code, the CLIs and the process-level tests (wrangler dev, Deno, Chromium) in Node; `workers` runs the service inside
 * real workerd with miniflare's KV and Durable Objects, its providers pointed at the loopback
 * emulator that test/global-setup.ts starts.
 */
export default defineConfig({
  test: {
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
    projects: [
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
        },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => {
            const emulator = inject<string>("emulatorUrl");
            return {
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                // The test network: public-looking example.com/.org/.net names (which the emulated
                // DNS answers as public) reach the emulator; nothing else leaves the machine.
                outboundService: (request: Request) => routeTestNetwork(request, emulator),
                // The ledger writes right after each response here (1 s batches in production), so
                // waitOnExecutionContext sees a request's counts stored.
                bindings: { EMULATOR_URL: emulator, LEDGER_FLUSH_MS: "0", ...emulatorVars(emulator) },
              },
            };
          }),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          globalSetup: ["test/global-setup.ts"],
          testTimeout: 60_000,
        },
      },
    ],
  },
});
