/**
 * Contract suite for the SingleFlight port (shared/web/flight.ts), run against every adapter:
 * the Durable Object on Workers (test/workers/ports.contract.test.ts), and on Deno the Deno KV
 * leases (one handle, and two handles on one file as two processes) and the in-process
 * coordinator (test/deno/ports.contract.test.ts). Jobs are real provider calls against the
 * loopback emulator, whose call counts are the evidence.
 */
import type { SingleFlight } from "../../shared/ports";
import type { ExtractJob, SearchJob } from "../../shared/web/job.types";
import type { ContractCase } from "./ports.contract";
import { answeredTogether, gateArrivals, openGate, until } from "../support/emulator-client";

export interface FlightContext {
  /** The emulator's base URL, as the adapter's fetch reaches it. */
  emulator: string;
  /** Calls the emulator received for `provider` whose query or URL contains `contains`. */
  calls(provider: string, contains: string): Promise<number>;
}

const settings = (emulator: string, name: string) => ({
  name,
  baseUrl: `${emulator}/${name}`,
  apiKey: "contract-key",
  timeoutMs: 10_000,
});
const options = { now: Date.now(), ttlMs: 60_000, store: true };

export function singleFlightContract(context: FlightContext): ContractCase<SingleFlight>[] {
  return [
    {
      name: "answers with content cut to charLimit (truncated: true), paid once, also on the stored copy",
      async run(flight, check, unique) {
        const url = `https://docs.example.com/${unique}/[chars:40000]`;
        const job: ExtractJob = {
          kind: "extract",
          provider: "tavily",
          settings: settings(context.emulator, "tavily"),
          request: { url, format: "markdown" },
          maxPageChars: 2_000_000,
          cacheExemptHosts: [],
        };
        const first = await flight.run(`contract:cut:${unique}`, job, { ...options, charLimit: 5_000 });
        const second = await flight.run(`contract:cut:${unique}`, job, { ...options, charLimit: 5_000 });
        for (const [what, outcome] of [
          ["miss", first],
          ["hit", second],
        ] as const) {
          check.equal(
            outcome.ok && "page" in outcome.value && outcome.value.page.content.length <= 5_000,
            true,
            `${what}: content within charLimit`,
          );
          check.equal(
            outcome.ok && "page" in outcome.value && outcome.value.truncated,
            true,
            `${what}: marked truncated`,
          );
        }
        check.equal(second.ok && second.cache, "hit", "the second call is a hit");
        check.equal(await context.calls("tavily", unique), 1, "provider calls");
      },
    },
    {
      name: "a failed search's rescue is one call for every concurrent caller, and never stored",
      async run(flight, check, unique) {
        const key = `contract:rescue:${unique}`;
        const gate = `rescue-${unique}`;
        const query = `contract rescue [fail:500@tavily] [gate:${gate}] ${unique}`;
        const job: SearchJob = {
          kind: "search",
          provider: "tavily",
          settings: settings(context.emulator, "tavily"),
          request: { query, count: 10 },
          rescue: { provider: "keyless", settings: { ...settings(context.emulator, "keyless"), apiKey: undefined } },
        };
        const outcomes = await answeredTogether(
          context.emulator,
          { gate, paying: 1, joiners: 3, count: () => flight.joiners(key) },
          [1, 2, 3, 4].map(() => flight.run(key, job, options)),
        );
        check.equal(
          outcomes.map((o) => o.ok && "results" in o.value && o.value.rescued === true && !o.stored),
          [true, true, true, true],
          "every caller got the unstored rescue",
        );
        check.equal(await context.calls("tavily", unique), 1, "provider calls");
        check.equal(await context.calls("keyless", unique), 1, "keyless calls");
      },
    },
    {
      name: "callers in flight merge whatever their max_age; max_age 0 pays once and replaces the stored entry",
      async run(flight, check, unique) {
        const key = `contract:fresh:${unique}`;
        const gate = `fresh-${unique}`;
        const job = searchJob(context, `contract fresh ${unique}`);
        const first = await flight.run(key, job, { ...options, now: Date.now() });
        // The refreshed answer's fetchedAt must be later than the first's, at millisecond resolution.
        await sleep(20);
        const held = searchJob(context, `contract fresh [gate:${gate}] ${unique}`);
        const fresh = await answeredTogether(
          context.emulator,
          { gate, paying: 1, joiners: 3, count: () => flight.joiners(key) },
          [1, 2, 3, 4].map(() => flight.run(key, held, { ...options, now: Date.now(), maxAgeMs: 0 })),
        );
        check.equal(
          fresh.map((o) => o.ok && o.cache).sort(),
          ["coalesced", "coalesced", "coalesced", "miss"],
          "max_age 0 callers: one pays, the others join it",
        );
        const later = await flight.run(key, job, { ...options, now: Date.now(), maxAgeMs: 60_000 });
        check.equal(later.ok && later.cache, "hit", "a later caller with a max_age");
        check.equal(
          later.ok &&
            first.ok &&
            fresh[0]!.ok &&
            later.fetchedAt === fresh[0]!.fetchedAt &&
            later.fetchedAt > first.fetchedAt,
          true,
          "the stored entry is the fresh one",
        );
        check.equal(await context.calls("tavily", unique), 2, "provider calls");
      },
    },
    {
      name: "unstored calls merge only with each other, read nothing and store nothing",
      async run(flight, check, unique) {
        const key = `contract:unstored:${unique}`;
        const gate = `unstored-${unique}`;
        const job = searchJob(context, `contract unstored ${unique}`);
        const held = searchJob(context, `contract unstored [gate:${gate}] ${unique}`);
        const unstored = { ...options, now: Date.now(), store: false };
        // One caller of each kind pays (two arrive at the gate), the other of its kind joins it.
        const outcomes = await answeredTogether(
          context.emulator,
          { gate, paying: 2, joiners: 2, count: () => flight.joiners(key) },
          [unstored, unstored, { ...options, now: Date.now() }, { ...options, now: Date.now() }].map((o) =>
            flight.run(key, held, o),
          ),
        );
        // Which caller of each kind leads is a race (two handles on one file take leases in either
        // order); what counts is that each kind pays once and its other caller joins.
        const kinds = outcomes.map((o) => (o.ok ? o.cache : "error"));
        check.equal(
          [kinds.slice(0, 2).sort(), kinds.slice(2).sort()],
          [
            ["coalesced", "miss"],
            ["coalesced", "miss"],
          ],
          "two unstored and two stored callers",
        );
        check.equal(await context.calls("tavily", unique), 2, "provider calls (one per kind)");
        const again = await flight.run(key, job, { ...unstored, now: Date.now() });
        check.equal(
          again.ok && [again.cache, again.stored],
          ["miss", false],
          "an unstored call after an entry was stored",
        );
        check.equal(await context.calls("tavily", unique), 3, "provider calls after it");
      },
    },
    {
      name: "forget drops the stored copy; a call in flight when it is forgotten still stores its answer",
      async run(flight, check, unique) {
        const key = `contract:forget:${unique}`;
        const gate = `forget-${unique}`;
        const job = searchJob(context, `contract forget ${unique}`);
        check.equal(await flight.forget(key), false, "forget of a key never stored");
        await flight.run(key, job, { ...options, now: Date.now() });
        check.equal(await flight.forget(key), true, "forget of a stored key");
        // The provider holds its answer until the gate opens: the call is in flight once it has arrived.
        const held = searchJob(context, `contract forget [gate:${gate}] ${unique}`);
        const inFlight = flight.run(key, held, { ...options, now: Date.now() });
        await until(
          async () => (await gateArrivals(context.emulator, gate)) === 1,
          () => "the call never arrived at the gate",
        );
        check.equal(await flight.forget(key), false, "forget while the call is in flight");
        await openGate(context.emulator, gate);
        check.equal((await inFlight).ok, true, "the call in flight answers");
        const after = await flight.run(key, job, { ...options, now: Date.now() });
        check.equal(after.ok && after.cache, "hit", "the answer of the call in flight was stored");
        check.equal(await context.calls("tavily", unique), 2, "provider calls");
      },
    },
  ];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function searchJob(context: FlightContext, query: string): SearchJob {
  return {
    kind: "search",
    provider: "tavily",
    settings: settings(context.emulator, "tavily"),
    request: { query, count: 10 },
  };
}
