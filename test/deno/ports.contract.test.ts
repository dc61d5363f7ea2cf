/**
 * The port contracts against the Deno adapters (run by `deno test`, from test/node/deno.test.ts,
 * which starts the loopback emulator and passes its URL as EMULATOR_URL).
 */
import { DenoKvStore } from "../../deno/cache.kv";
import { DenoKvEmbedCounter } from "../../deno/embeds.kv";
import { MemoryEmbedCounter } from "../../deno/embeds.memory";
import { DenoKvFlight } from "../../deno/flight.kv";
import { silentLogger } from "../../shared/log";
import type { EmbedCounter, SingleFlight } from "../../shared/ports";
import { CopyElection, FlightCoordinator } from "../../shared/web/flight";
import { singleFlightContract } from "../contracts/flight.contract";
import { DenoKvLedgerStore } from "../../deno/ledger.kv";
import { cacheStoreContract, type Check, embedCounterContract, ledgerStoreContract } from "../contracts/ports.contract";
import { emulatorCalls } from "../support/emulator-client";

const check: Check = {
  equal(actual, expected, what) {
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    if (a !== e) throw new Error(`${what}: expected ${e.slice(0, 200)}, got ${a.slice(0, 200)}`);
  },
};

const kv = await Deno.openKv(":memory:");
const unique = () => crypto.randomUUID();

for (const c of cacheStoreContract) {
  Deno.test(`CacheStore contract: Deno KV: ${c.name}`, () => c.run(new DenoKvStore(kv), check, unique()));
}
for (const c of ledgerStoreContract) {
  Deno.test(`LedgerStore contract: Deno KV sums: ${c.name}`, () => c.run(new DenoKvLedgerStore(kv), check, unique()));
}
const counter = new MemoryEmbedCounter(Date.now);
for (const c of embedCounterContract) {
  Deno.test(`EmbedCounter contract: in-process ledger: ${c.name}`, () => c.run(counter, check, unique()));
}
const onKv = new DenoKvEmbedCounter(kv, Date.now);
for (const c of embedCounterContract) {
  Deno.test(`EmbedCounter contract: Deno KV counters: ${c.name}`, () => c.run(onKv, check, unique()));
}

// Two handles on one KV file behave as two processes: nothing but Deno KV's check-and-set keeps
// their reservations apart. Each call goes to the next handle in turn.
const file = await Deno.makeTempFile({ suffix: ".sqlite3" });
const handles = [
  new DenoKvEmbedCounter(await Deno.openKv(file), Date.now),
  new DenoKvEmbedCounter(await Deno.openKv(file), Date.now),
];
let turn = 0;
const alternating: EmbedCounter = {
  reserve: (sessionId, imageKey, cap) => handles[turn++ % 2]!.reserve(sessionId, imageKey, cap),
  release: (sessionId, imageKey) => handles[turn++ % 2]!.release(sessionId, imageKey),
};
for (const c of embedCounterContract) {
  Deno.test({
    name: `EmbedCounter contract: Deno KV counters, two handles on one file: ${c.name}`,
    sanitizeResources: false,
    fn: () => c.run(alternating, check, unique()),
  });
}

const emulator = Deno.env.get("EMULATOR_URL");
if (!emulator)
  throw new Error("EMULATOR_URL is not set: run this file from test/node/deno.test.ts, which starts the emulator");
const flightContract = singleFlightContract({
  emulator,
  calls: (provider, contains) => emulatorCalls(emulator, provider, contains),
});
const flightDeps = {
  fetch: (input: Request | string | URL, init?: RequestInit) => fetch(input, init),
  log: silentLogger,
  clock: Date.now,
};
const flightTiming = { leaseMs: 2000, pollMs: { first: 10, max: 50 } };
const flightOn = async (path: string) => {
  const handle = await Deno.openKv(path);
  return new DenoKvFlight(handle, new DenoKvStore(handle), flightDeps, flightTiming);
};
// Two flights on one file are two processes: each call goes to the next in turn.
const flights = [await flightOn(file), await flightOn(file)];
let flightTurn = 0;
const flightAdapters: Record<string, () => SingleFlight> = {
  "Deno KV leases": () => new DenoKvFlight(kv, new DenoKvStore(kv), flightDeps, flightTiming),
  "Deno KV leases, two handles on one file": () => ({
    run: (key, job, options) => flights[flightTurn++ % 2]!.run(key, job, options),
    forget: (key) => flights[flightTurn++ % 2]!.forget(key),
    // Every caller waiting on the key, in either process.
    joiners: async (key) => (await flights[0]!.joiners(key)) + (await flights[1]!.joiners(key)),
  }),
  "in-process coordinator (single-process mode)": () =>
    new FlightCoordinator({
      election: new CopyElection(new DenoKvStore(kv, Date.now, false).processCopy()),
      fetch: flightDeps.fetch,
      log: silentLogger,
    }),
};
for (const [adapter, make] of Object.entries(flightAdapters)) {
  for (const c of flightContract) {
    Deno.test({
      name: `SingleFlight contract: ${adapter}: ${c.name}`,
      sanitizeResources: false,
      sanitizeOps: false,
      fn: () => c.run(make(), check, unique()),
    });
  }
}
