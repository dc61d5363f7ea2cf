/**
 * Contract suite for the SingleFlight port (shared/web/flight.ts), run against every adapter:
 * the Durable Object on Workers and the in-process FlightCoordinator (Deno's). Jobs are real
 * provider calls against the loopback emulator, whose call counts are the evidence.
 */
import type { SingleFlight } from "../../shared/ports";
import type { ExtractJob, SearchJob } from "../../shared/web/job.types";
import type { ContractCase } from "./ports.contract";

export interface FlightContext {
  /** The emulator's base URL, as the adapter's fetch reaches it. */
  emulator: string;
  /** Calls the emulator received for `provider` whose query or URL contains `contains`. */
  calls(provider: string, contains: string): Promise<number>;
}

const settings = (emulator: string, name: string) => ({ name, baseUrl: `${emulator}/${name}`, apiKey: "contract-key", timeoutMs: 10_000 });
const options = { now: Date.now(), ttlMs: 60_000, store: true };

export function singleFlightContract(context: FlightContext): ContractCase<SingleFlight>[] {
  return [
    {
      name: "answers with content cut to charLimit (truncated: true), paid once, also on the stored copy",
      async run(flight, check, unique) {
        const url = `https://docs.example.com/${unique}/[chars:40000]`;
        const job: ExtractJob = { kind: "extract", provider: "tavily", settings: settings(context.emulator, "tavily"), request: { url, format: "markdown" }, maxPageChars: 2_000_000 };
        const first = await flight.run(`contract:cut:${unique}`, job, { ...options, charLimit: 5_000 });
        const second = await flight.run(`contract:cut:${unique}`, job, { ...options, charLimit: 5_000 });
        for (const [what, outcome] of [["miss", first], ["hit", second]] as const) {
          check.equal(outcome.ok && "page" in outcome.value && outcome.value.page.content.length <= 5_000, true, `${what}: content within charLimit`);
          check.equal(outcome.ok && "page" in outcome.value && outcome.value.truncated, true, `${what}: marked truncated`);
        }
        check.equal(second.ok && second.cache, "hit", "the second call is a hit");
        check.equal(await context.calls("tavily", unique), 1, "provider calls");
      },
    },
    {
      name: "a failed search's rescue is one call for every concurrent caller, and never stored",
      async run(flight, check, unique) {
        const query = `contract rescue [fail:500@tavily] [slow:200] ${unique}`;
        const job: SearchJob = {
          kind: "search",
          provider: "tavily",
          settings: settings(context.emulator, "tavily"),
          request: { query, count: 10 },
          rescue: { provider: "keyless", settings: { ...settings(context.emulator, "keyless"), apiKey: undefined } },
        };
        const outcomes = await Promise.all([1, 2, 3, 4].map(() => flight.run(`contract:rescue:${unique}`, job, options)));
        check.equal(outcomes.map((o) => o.ok && "results" in o.value && o.value.rescued === true && !o.stored), [true, true, true, true], "every caller got the unstored rescue");
        check.equal(await context.calls("tavily", unique), 1, "provider calls");
        check.equal(await context.calls("keyless", unique), 1, "keyless calls");
      },
    },
  ];
}
