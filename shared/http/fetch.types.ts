/**
 * The web-standard fetch signature, injected so outbound calls are explicit. A leaf (no imports),
 * so a provider's file can name it without reaching the ports and, through them, the
 * configuration that lists the providers; shared/ports.ts re-exports it with every other port.
 */
export type FetchFn = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
