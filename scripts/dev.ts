/**
 * `npm run dev`: `wrangler dev` with its arguments passed through, minus two kinds of noise a
 * newcomer would read as a failure of the service (README, "Two commands"):
 *
 * - wrangler fetching `https://workers.cloudflare.com/cf.json` for `Request.cf` at start, which
 *   offline prints two `getaddrinfo ENOTFOUND` stack traces: turned off with miniflare's
 *   `CLOUDFLARE_CF_FETCH_ENABLED=false` (the service never reads `request.cf`; a value you set wins);
 * - workerd's own `✘ [ERROR] e = kj/…` block (with a stack of frame addresses) for an outbound
 *   fetch that failed at the network (a DNS lookup, a refused connection): the Worker receives
 *   that failure as a rejected fetch and answers it itself (`fetch_failed`, logged as a warning),
 *   so the runtime's copy is dropped. Every other line, errors of the service's own included,
 *   passes unchanged.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** ANSI colour and style sequences, which wrangler adds when it writes to a terminal. */
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * workerd's report of a network failure it hands to the Worker as a rejected fetch: the service
 * answers those itself. Anything else workerd reports is kept.
 */
const ANSWERED_NETWORK_FAILURE =
  /\[ERROR\]\s+e = kj\/\S+: (?:failed|disconnected|overloaded): .*(?:DNS lookup failed|Connection refused|Network is unreachable|No route to host|Connection reset|timed out|connect\(\))/i;

/**
 * A line filter: false drops the line. After an answered network failure, its indented detail
 * lines (`stack: …`) and the blank lines around them are dropped too, up to the next message.
 */
function devOutputFilter(): (line: string) => boolean {
  let inDroppedBlock = false;
  return (line) => {
    const plain = line.replace(ANSI, "");
    if (ANSWERED_NETWORK_FAILURE.test(plain)) {
      inDroppedBlock = true;
      return false;
    }
    if (inDroppedBlock) {
      if (plain.trim() === "" || /^\s+\S/.test(plain)) return false;
      inDroppedBlock = false;
    }
    return true;
  };
}

function main(): void {
  const env: NodeJS.ProcessEnv = { ...process.env, WRANGLER_SEND_METRICS: "false" };
  env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  // Only stderr, where both kinds of noise go, passes through the filter: stdin and stdout stay the
  // terminal's, so wrangler keeps its interactive keys ([b] open a browser, [x] exit, ...).
  // Colours as wrangler would use them writing to this terminal itself.
  if (process.stderr.isTTY && env.FORCE_COLOR === undefined) env.FORCE_COLOR = "1";
  const child = spawn("wrangler", ["dev", ...process.argv.slice(2)], { env, stdio: ["inherit", "inherit", "pipe"] });
  const keep = devOutputFilter();
  createInterface({ input: child.stderr, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
    if (keep(line)) process.stderr.write(`${line}\n`);
  });
  // Ctrl-C reaches wrangler too (same process group): wait for it to finish, then leave as it did.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.on(signal, () => {
      if (child.exitCode === null) child.kill(signal);
    });
  child.on("error", (error) => {
    console.error(`npm run dev: could not start wrangler (${error.message}); run npm install first.`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

main();
