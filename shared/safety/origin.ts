/**
 * Which browser pages may call the service (docs/api.md, "Origin"). Browsers send `Origin`;
 * agents and CLIs do not, and pass. The danger is DNS rebinding: a page on an attacker's name that
 * then resolves to 127.0.0.1 reaches a local server with that name as both its `Host` and its
 * `Origin`, so "the request's own origin" is the attacker's. A page cannot present an API token it
 * does not have, so the danger is real only where no token is needed (anonymous access).
 */
import { classifyIpLiteral } from "./ip";
import { AppError } from "../http/errors";

/** Whether `origin` (a request's `Origin` header) is one of `security.allowed_origins` (stored lower-case). */
export function isAllowedOrigin(origin: string, allowedOrigins: readonly string[]): boolean {
  return allowedOrigins.includes(origin.trim().toLowerCase());
}

/**
 * Whether a page on `origin` may call: one of `security.allowed_origins` (stored lower-case), or
 * the request's own origin, which counts when a token is needed, or when the service was reached
 * by an address or `localhost` (a rebinding page has a name of its own).
 */
export function originAllowed(
  origin: string,
  request: Request,
  allowedOrigins: readonly string[],
  anonymous: boolean,
): boolean {
  if (isAllowedOrigin(origin, allowedOrigins)) return true;
  const own = new URL(request.url);
  if (origin.trim().toLowerCase() !== own.origin) return false;
  return !anonymous || reachedByAddress(own.hostname);
}

/** Whether a URL's hostname is an IP address or `localhost`, which no other site's page can be on. */
function reachedByAddress(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || classifyIpLiteral(host) !== null;
}

/**
 * The 403 for a page that may not call `/v1/*` or the provider proxy while they take anonymous
 * calls (with a token required, a page has no way in, so any origin may try), or null. A page is
 * known by its `Origin`. A request without one passes only when its `Sec-Fetch-Site` (which every
 * current browser sends, and agents and CLIs do not) is absent, `none` (a typed URL, a bookmark) or
 * `same-origin`, and then only as a page on the request's own origin: a rebinding page's own GET
 * is same-origin, on the attacker's name. Any other site (`cross-site`, `same-site`: an `<img src>`
 * or a link on another site, which sends no `Origin` on a GET) is refused outright.
 */
export function anonymousOriginRefusal(
  request: Request,
  allowedOrigins: readonly string[],
  anonymous: boolean,
): AppError | null {
  if (!anonymous) return null;
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site")?.trim().toLowerCase() ?? null;
  if (origin === null && site !== null && site !== "none" && site !== "same-origin") {
    return new AppError(
      403,
      "forbidden",
      `A request sent by a page on another site (Sec-Fetch-Site: ${site.slice(0, 40)}) may not call this service while it takes calls without a token; call it from a program, or set a token (API_TOKENS).`,
    );
  }
  const page = origin ?? (site === "same-origin" ? new URL(request.url).origin : null);
  if (page === null || originAllowed(page, request, allowedOrigins, true)) return null;
  return new AppError(
    403,
    "forbidden",
    `A page on ${page.slice(0, 200)} may not call this service while it takes calls without a token; an operator can allow it in security.allowed_origins.`,
  );
}
