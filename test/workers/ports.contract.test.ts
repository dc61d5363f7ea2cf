/** The port contracts against the Workers adapters: KV, Durable Object storage, SessionDO. */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { KvStore } from "../../workers/cache.kv";
import { DurableObjectStore } from "../../workers/cache.do-storage";
import { loadConfig } from "../../shared/config/config.load";
import { durableLedgerStore, workersDeps } from "../../workers/deps";
import { cacheStoreContract, type Check, embedCounterContract, ledgerStoreContract } from "../contracts/ports.contract";
import { singleFlightContract } from "../contracts/flight.contract";
import { CopyElection, FlightCoordinator } from "../../shared/web/flight";
import { silentLogger } from "../../shared/log";
import type { CacheEntry, CacheStore, LedgerRow } from "../../shared/ports";
import { LEDGER_NAMES_PER_HOUR, LEDGER_OTHER_NAME } from "../../shared/stats/ledger";
import { LedgerDO } from "../../workers/ledger.do";
import { EMULATOR, providerCalls, testEnv, uniqueToken } from "./helpers";

const check: Check = { equal: (actual, expected, what) => expect(actual, what).toEqual(expected) };

describe("CacheStore contract: Workers KV", () => {
  for (const c of cacheStoreContract) it(c.name, () => c.run(new KvStore(testEnv.CACHE), check, uniqueToken()));
});

describe("CacheStore contract: Durable Object storage", () => {
  for (const c of cacheStoreContract) {
    it(c.name, async () => {
      const stub = testEnv.FLIGHT.get(testEnv.FLIGHT.idFromName(`contract-${uniqueToken()}`));
      await runInDurableObject(stub, (_instance, state) =>
        c.run(new DurableObjectStore(state.storage), check, uniqueToken()),
      );
    });
  }
});

describe("EmbedCounter contract: SessionDO", () => {
  const counter = workersDeps(testEnv).embeds;
  for (const c of embedCounterContract) it(c.name, () => c.run(counter, check, uniqueToken()));
});

describe("LedgerStore contract: LedgerDO (SQLite)", () => {
  for (const c of ledgerStoreContract) it(c.name, () => c.run(durableLedgerStore(testEnv), check, uniqueToken()));

  it("keeps a bucket's names bound after the object restarts: it reads them back from its storage", async () => {
    const pricing = loadConfig({}).config.pricing;
    // An object of its own, and an hour no other test writes.
    const stub = testEnv.LEDGER.get(testEnv.LEDGER.idFromName(`ledger-restart-${uniqueToken()}`));
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 300 * 3_600_000;
    const row = (model: string): LedgerRow => ({
      hour,
      tool: "llm",
      provider: "openai",
      model,
      counter: "requests",
      value: 1,
    });
    await stub.add(Array.from({ length: LEDGER_NAMES_PER_HOUR }, (_, i) => row(`before-${i}`)));
    const answer = await runInDurableObject(stub, (_instance: LedgerDO, state) => {
      // The same storage in a new instance: what an eviction or a deploy leaves.
      const restarted = new LedgerDO(state, {});
      restarted.add([row("after"), row("before-0")]);
      return restarted.report({ window: "1h", now: hour, pricing });
    });
    expect(answer.by_model.llm.after).toBeUndefined();
    expect(answer.by_model.llm["before-0"]?.requests).toBe(2);
    expect(answer.by_model.llm[LEDGER_OTHER_NAME]?.requests).toBe(1);
  });

  it("keeps a batch in the object when Analytics Engine refuses its data points", async () => {
    // The platform's binding past its per-invocation limit: it throws on a write.
    const refusing = {
      writeDataPoint: () => {
        throw new Error("too many data points in this invocation");
      },
    };
    const store = durableLedgerStore({ ...testEnv, LEDGER_ANALYTICS: refusing } as typeof testEnv);
    const model = `m-${uniqueToken()}`;
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    await store.add([{ hour, tool: "llm", provider: "openai", model, counter: "requests", value: 3 }]);
    const answer = await store.report({ window: "1h", now: hour, pricing: loadConfig({}).config.pricing });
    expect(answer.by_model.llm[model]?.requests).toBe(3);
  });
});

describe("SingleFlight contract", () => {
  const contract = singleFlightContract({ emulator: EMULATOR, calls: providerCalls });
  const memory = (): CacheStore => {
    const entries = new Map<string, CacheEntry<unknown>>();
    return {
      get: async <T>(key: string) => (entries.get(key) as CacheEntry<T> | undefined) ?? null,
      put: async (key, entry) => void entries.set(key, entry),
      delete: async (key) => entries.delete(key),
    };
  };
  const adapters = {
    "FlightDO (Workers)": () => workersDeps(testEnv).flight,
    "in-process FlightCoordinator (Deno)": () =>
      new FlightCoordinator({
        election: new CopyElection(memory()),
        fetch: (input, init) => fetch(input, init),
        log: silentLogger,
      }),
  };
  for (const [adapter, make] of Object.entries(adapters)) {
    for (const c of contract) it(`${adapter}: ${c.name}`, () => c.run(make(), check, uniqueToken()));
  }
});
