/**
 * Contract suites for the ports, run against every adapter: Workers KV and Durable Object storage
 * (test/workers/ports.contract.test.ts) and Deno KV / the in-process ledger
 * (test/deno/ports.contract.test.ts). Runtime-agnostic on purpose: each runner brings its own
 * test function and this tiny assert.
 */
import { loadConfig } from "../../shared/config/config.load";
import type { CacheStore, EmbedCounter, LedgerRow, LedgerStore } from "../../shared/ports";
import { LEDGER_NAMES_PER_HOUR, LEDGER_OTHER_NAME, LEDGER_SESSIONS_PER_HOUR } from "../../shared/stats/ledger";
import { ANSWER_SESSIONS } from "../../shared/stats/stats.schema";
import type { StatsWindow } from "../../shared/stats/stats.schema";

export interface Check {
  equal(actual: unknown, expected: unknown, what: string): void;
}

export interface ContractCase<P> {
  name: string;
  run(port: P, check: Check, unique: string): Promise<void>;
}

/** A text with multi-byte characters, long enough to cross every adapter's value-size limit. */
const LONG_TEXT = "Grüße, 世界 — 🙂 ".repeat(20_000);

export const cacheStoreContract: ContractCase<CacheStore>[] = [
  {
    name: "a key never written is a miss",
    async run(store, check, unique) {
      check.equal(await store.get(`missing:${unique}`), null, "get of an unknown key");
    },
  },
  {
    name: "returns what was put, with its expiry inside the value",
    async run(store, check, unique) {
      const entry = { value: { results: [{ title: "a", position: 1 }] }, expiresAt: 1_800_000_000_000 };
      await store.put(`k:${unique}`, entry, 20 * 60_000);
      check.equal(await store.get(`k:${unique}`), entry, "the entry read back");
    },
  },
  {
    name: "stores values larger than the platform's per-value limit, multi-byte text intact",
    async run(store, check, unique) {
      const entry = { value: { page: { content: LONG_TEXT } }, expiresAt: 1_800_000_000_000 };
      await store.put(`big:${unique}`, entry, 60_000);
      const read = await store.get<{ page: { content: string } }>(`big:${unique}`);
      check.equal(read?.value.page.content.length, LONG_TEXT.length, "length of the long value");
      check.equal(read?.value.page.content === LONG_TEXT, true, "the long value is identical");
    },
  },
  {
    name: "a later put replaces the entry, also when the new one is smaller",
    async run(store, check, unique) {
      await store.put(`r:${unique}`, { value: LONG_TEXT, expiresAt: 1 }, 60_000);
      await store.put(`r:${unique}`, { value: "short", expiresAt: 2 }, 60_000);
      check.equal(await store.get(`r:${unique}`), { value: "short", expiresAt: 2 }, "the replaced entry");
    },
  },
  {
    name: "takes a TTL below the platform minimum (the expiry in the value decides)",
    async run(store, check, unique) {
      await store.put(`ttl:${unique}`, { value: 1, expiresAt: 5 }, 1_000);
      check.equal((await store.get(`ttl:${unique}`))?.expiresAt, 5, "expiry of a 1-second entry");
    },
  },
  {
    name: "delete drops the entry, long or short, and says whether there was one",
    async run(store, check, unique) {
      check.equal(await store.delete(`d:${unique}`), false, "delete of a key never written");
      await store.put(
        `d:${unique}`,
        { value: LONG_TEXT, expiresAt: 1_800_000_000_000, fetchedAt: 1_700_000_000_000 },
        60_000,
      );
      check.equal((await store.get(`d:${unique}`))?.fetchedAt, 1_700_000_000_000, "the fetch time is kept");
      check.equal(await store.delete(`d:${unique}`), true, "delete of a stored key");
      check.equal(await store.get(`d:${unique}`), null, "get after delete");
      await store.put(`d:${unique}`, { value: "again", expiresAt: 2 }, 60_000);
      check.equal(await store.get(`d:${unique}`), { value: "again", expiresAt: 2 }, "a put after delete");
    },
  },
];

export const embedCounterContract: ContractCase<EmbedCounter>[] = [
  {
    name: "reserves up to the cap, then refuses with the count",
    async run(counter, check, unique) {
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await counter.reserve(unique, "img", 3));
      check.equal(
        results,
        [
          { ok: true, count: 1 },
          { ok: true, count: 2 },
          { ok: true, count: 3 },
          { ok: false, count: 3 },
        ],
        "four reservations with cap 3",
      );
    },
  },
  {
    name: "a released slot can be taken again",
    async run(counter, check, unique) {
      await counter.reserve(unique, "img", 1);
      await counter.release(unique, "img");
      check.equal(await counter.reserve(unique, "img", 1), { ok: true, count: 1 }, "reservation after a release");
    },
  },
  {
    name: "six parallel reservations with cap 3 take exactly 3 slots",
    async run(counter, check, unique) {
      const results = await Promise.all(Array.from({ length: 6 }, () => counter.reserve(unique, "img", 3)));
      check.equal(results.filter((r) => r.ok).length, 3, "granted reservations");
    },
  },
  {
    name: "images and sessions are counted apart, and no cap means unlimited",
    async run(counter, check, unique) {
      await counter.reserve(unique, "a", 1);
      check.equal((await counter.reserve(unique, "b", 1)).ok, true, "another image in the session");
      check.equal((await counter.reserve(`${unique}-other`, "a", 1)).ok, true, "the same image in another session");
      for (let i = 0; i < 5; i++) await counter.reserve(unique, "free", null);
      check.equal(await counter.reserve(unique, "free", null), { ok: true, count: 6 }, "unlimited reservations");
    },
  },
];

const HOUR = 3_600_000;
const pricing = loadConfig({}).config.pricing;

/** The counts (no money) one store answers for `model` over the window ending with the hour of `now`. */
async function countsOf(store: LedgerStore, model: string, window: StatsWindow, now: number) {
  const counts = (await store.report({ window, now, pricing })).by_model.llm[model];
  // In counter order: a store reads its counters in its own key order.
  return (
    counts &&
    Object.fromEntries(
      Object.entries(counts)
        .filter(([name]) => !name.endsWith("_usd"))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    )
  );
}

/** Money compared to the millionth of a dollar (a sum of prices is a float). */
const microUsd = (usd: number) => Math.round(usd * 1e6);

export const ledgerStoreContract: ContractCase<LedgerStore>[] = [
  {
    name: "adds to counters, keeps buckets and keys apart, answers a window ending with the current hour",
    async run(store, check, unique) {
      const now = Date.now();
      const hour = Math.floor(now / HOUR) * HOUR;
      const row = (h: number, counter: string, value: number, model = `${unique}-a`): LedgerRow => ({
        hour: h,
        tool: "llm",
        provider: unique,
        model,
        counter,
        value,
      });
      await store.add([row(hour, "requests", 2), row(hour, "errors", 1), row(hour - HOUR, "requests", 5)]);
      await store.add([row(hour, "requests", 3), row(hour, "requests", 1, `${unique}-b`)]);
      check.equal(await countsOf(store, `${unique}-a`, "1h", now), { errors: 1, requests: 5 }, "the current hour");
      check.equal(await countsOf(store, `${unique}-b`, "1h", now), { requests: 1 }, "another model, the same hour");
      check.equal(
        await countsOf(store, `${unique}-a`, "24h", now),
        { errors: 1, requests: 10 },
        "with the hour before",
      );
      check.equal(
        await countsOf(store, `${unique}-a`, "1h", now - HOUR),
        { requests: 5 },
        "the hour before, alone (its window ends there)",
      );
      const answer = await store.report({ window: "1h", now, pricing });
      check.equal(answer.by_provider.llm[unique]?.requests, 6, "the provider's requests");
    },
  },
  {
    name: "twenty concurrent batches lose no increment",
    async run(store, check, unique) {
      const now = Date.now();
      const hour = Math.floor(now / HOUR) * HOUR;
      await Promise.all(
        Array.from({ length: 20 }, () =>
          store.add([{ hour, tool: "llm", provider: "anthropic", model: unique, counter: "input_tokens", value: 7 }]),
        ),
      );
      check.equal(await countsOf(store, unique, "1h", now), { input_tokens: 140 }, "20 × 7");
    },
  },
  {
    name: "drops buckets older than 35 days",
    async run(store, check, unique) {
      const hour = Math.floor(Date.now() / HOUR) * HOUR;
      const old = hour - 36 * 24 * HOUR;
      const row = (at: number): LedgerRow => ({
        hour: at,
        tool: "llm",
        provider: "anthropic",
        model: unique,
        counter: "requests",
        value: 1,
      });
      await store.add([row(old)]);
      await store.add([row(hour)]);
      check.equal(await countsOf(store, unique, "1h", old), undefined, "the 36-day-old bucket");
      check.equal(await countsOf(store, unique, "1h", hour), { requests: 1 }, "the current one");
    },
  },
  {
    name: `keeps ${LEDGER_NAMES_PER_HOUR} model names per hour and tool apart, the counts of later ones under ${LEDGER_OTHER_NAME}`,
    async run(store, check, unique) {
      // An hour no other case writes: the bound is per bucket, whoever wrote its names.
      const hour = Math.floor(Date.now() / HOUR) * HOUR - 200 * HOUR;
      const row = (model: string, value = 1): LedgerRow => ({
        hour,
        tool: "llm",
        provider: unique,
        model,
        counter: "requests",
        value,
      });
      const name = (i: number) => `${unique}-${i}`;
      await store.add(Array.from({ length: LEDGER_NAMES_PER_HOUR + 5 }, (_, i) => row(name(i))));
      // A name already kept still adds to itself; a new one, to the rest.
      await store.add([row(name(0), 2), row(name(LEDGER_NAMES_PER_HOUR + 10)), row("", 1)]);
      const answer = await store.report({ window: "1h", now: hour, pricing });
      const named = Object.keys(answer.by_model.llm).filter((model) => model.startsWith(`${unique}-`));
      check.equal(named.length, LEDGER_NAMES_PER_HOUR, "names kept apart");
      check.equal(answer.by_model.llm[name(0)]?.requests, 3, "the first name, added to");
      check.equal(answer.by_model.llm[name(LEDGER_NAMES_PER_HOUR)], undefined, "the first name past the bound");
      check.equal(answer.by_model.llm[LEDGER_OTHER_NAME]?.requests, 6, "the later names' requests");
      check.equal(answer.by_model.llm.unknown?.requests, 1, "a row without a name is not a name");
      check.equal(answer.totals.llm.requests, LEDGER_NAMES_PER_HOUR + 9, "every request counted");
    },
  },
  {
    name: "keeps a session's rows apart from the tool's: summed per session, its times the first and the last",
    async run(store, check, unique) {
      // An hour no other case writes, and the one after it.
      const hour = Math.floor(Date.now() / HOUR) * HOUR - 400 * HOUR;
      const model = "claude-sonnet-4-5";
      const row = (h: number, session: string | undefined, counter: string, value: number): LedgerRow => ({
        hour: h,
        tool: "llm",
        provider: "anthropic",
        model,
        counter,
        value,
        ...(session === undefined ? {} : { session }),
      });
      const [a, b] = [`${unique}-a`, `${unique}-b`];
      const session = (name: string, h: number, requests: number, at: number) => [
        row(h, undefined, "requests", requests),
        row(h, name, "requests", requests),
        row(h, name, "input_tokens", 1_000_000),
        row(h, name, "cache_write_5m_tokens", 300),
        row(h, name, "cache_write_1h_tokens", 200),
        row(h, name, "first_at", at),
        row(h, name, "last_at", at),
      ];
      await store.add(session(a, hour, 2, hour + 5_000));
      await store.add([...session(a, hour, 1, hour + 1_000), ...session(b, hour, 1, hour + 9_000)]);
      await store.add(session(a, hour + HOUR, 4, hour + HOUR + 7_000));
      // As sent: 5 M uncached input tokens at $3 where 1 M was billed in the later hour.
      await store.add([row(hour + HOUR, a, "as_sent_input_tokens", 5_000_000)]);
      const answer = await store.sessions({ window: "24h", now: hour + HOUR, pricing });
      const ours = answer.sessions.filter((s) => s.session.startsWith(unique));
      check.equal(
        ours.map((s) => [s.session, s.requests, s.input_tokens, s.cache_write_tokens]),
        [
          [a, 7, 3_000_000, 1500],
          [b, 1, 1_000_000, 500],
        ],
        "sessions, the most saved first, summed over their hours",
      );
      const first = ours[0]!;
      check.equal([first.provider, first.model], ["anthropic", model], "the session's provider and model");
      check.equal(
        [first.first_at, first.last_at],
        [
          new Date(hour + 1_000).toISOString().replace(".000", ""),
          new Date(hour + HOUR + 7_000).toISOString().replace(".000", ""),
        ],
        "its first and last request",
      );
      // The earlier hour holds no as-sent count, so it is taken as sent as billed: 2 M input at $3
      // and its writes (600 5-min at $3.75/M, 400 1-h at $6/M); the later hour as sent is 5 M input.
      check.equal(
        microUsd(first.cost_as_sent_usd),
        microUsd(15 + 6 + 0.00225 + 0.0024),
        "as sent, priced, hour by hour",
      );
      check.equal(
        microUsd(first.saved_usd),
        microUsd(first.cost_as_sent_usd - first.cost_usd),
        "saved = as sent − billed",
      );
      const second = ours[1]!;
      check.equal(
        [microUsd(second.cost_as_sent_usd), second.saved_usd],
        [microUsd(second.cost_usd), 0],
        "no as-sent count: as sent = billed, nothing claimed",
      );
      const stats = await store.report({ window: "24h", now: hour + HOUR, pricing });
      check.equal(stats.by_model.llm[model]?.requests, 8, "/v1/stats counts the tool's rows, not the sessions' again");
      check.equal(stats.totals.llm.input_tokens, 0, "session rows are not in /v1/stats");
      const before = await store.sessions({ window: "1h", now: hour, pricing });
      check.equal(
        before.sessions.filter((s) => s.session.startsWith(unique)).map((s) => [s.session, s.requests]),
        [
          [a, 3],
          [b, 1],
        ],
        "the earlier hour alone",
      );
    },
  },
  {
    name: "takes a session's hours counted before the as-sent counters as sent as billed, hour by hour, as /v1/stats does",
    async run(store, check, unique) {
      // Two hours no other case writes: the first counted before the as-sent counters existed.
      const before = Math.floor(Date.now() / HOUR) * HOUR - 440 * HOUR;
      const after = before + HOUR;
      const model = "claude-sonnet-4-5";
      // Each count as the proxy writes it: the tool's row, and the same under the session.
      const counted = (h: number, session: string, counts: Record<string, number>): LedgerRow[] =>
        Object.entries(counts).flatMap(([counter, value]) => {
          const row: LedgerRow = { hour: h, tool: "llm", provider: "anthropic", model, counter, value };
          return [row, { ...row, session }];
        });
      const [spans, old] = [`${unique}-spans`, `${unique}-old`];
      // Sonnet 4.5: input $3, output $15 per million tokens.
      await store.add([
        // Billed 2 M input and 100 k output: $7.50, no as-sent count.
        ...counted(before, spans, { requests: 2, input_tokens: 2_000_000, output_tokens: 100_000 }),
        // Billed $3, no as-sent count: a session that claims nothing.
        ...counted(before, old, { requests: 1, input_tokens: 1_000_000 }),
      ]);
      // Billed $4.50; as sent 5 M input and the output: $16.50.
      await store.add(
        counted(after, spans, {
          requests: 1,
          input_tokens: 1_000_000,
          output_tokens: 100_000,
          as_sent_input_tokens: 5_000_000,
          as_sent_output_tokens: 100_000,
        }),
      );
      const windows: Array<[string, StatsWindow, number, Record<string, [number, number, number]>]> = [
        // [what, window, now, per session: billed, as sent, saved]
        ["both hours", "24h", after, { [spans]: [12, 24, 12], [old]: [3, 3, 0] }],
        ["the hour before the counters", "1h", before, { [spans]: [7.5, 7.5, 0], [old]: [3, 3, 0] }],
        ["the hour after", "1h", after, { [spans]: [4.5, 16.5, 12] }],
      ];
      for (const [what, window, now, expected] of windows) {
        const listed = (await store.sessions({ window, now, pricing })).sessions.filter((s) =>
          s.session.startsWith(unique),
        );
        check.equal(
          Object.fromEntries(
            listed.map((s) => [s.session, [s.cost_usd, s.cost_as_sent_usd, s.saved_usd].map(microUsd)]),
          ),
          Object.fromEntries(Object.entries(expected).map(([name, usd]) => [name, usd.map(microUsd)])),
          `${what}: each session's billed, as sent and saved`,
        );
        const llm = (await store.report({ window, now, pricing })).totals.llm;
        const sum = (field: "cost_usd" | "cost_as_sent_usd" | "saved_usd") =>
          microUsd(listed.reduce((usd, s) => usd + s[field], 0));
        check.equal(
          [sum("cost_usd"), sum("cost_as_sent_usd"), sum("saved_usd")],
          [llm.cost_usd, llm.cost_as_sent_usd, llm.saved_usd].map(microUsd),
          `${what}: the sessions sum to /v1/stats' LLM figures`,
        );
      }
    },
  },
  {
    name: `keeps ${LEDGER_SESSIONS_PER_HOUR} sessions per hour apart, and answers at most ${ANSWER_SESSIONS}, the rest as ${LEDGER_OTHER_NAME}`,
    async run(store, check, unique) {
      const hour = Math.floor(Date.now() / HOUR) * HOUR - 420 * HOUR;
      const row = (session: string, value = 1): LedgerRow => ({
        hour,
        tool: "llm",
        provider: "openai",
        model: "gpt-4o",
        counter: "requests",
        value,
        session,
      });
      const name = (i: number) => `${unique}-${i}`;
      await store.add(Array.from({ length: LEDGER_SESSIONS_PER_HOUR + 5 }, (_, i) => row(name(i))));
      await store.add([row(name(0), 2), row(name(LEDGER_SESSIONS_PER_HOUR + 10))]);
      const answer = await store.sessions({ window: "1h", now: hour, pricing });
      check.equal(answer.sessions.length, ANSWER_SESSIONS, "sessions answered");
      const other = answer.sessions.at(-1)!;
      check.equal(other.session, LEDGER_OTHER_NAME, "the rest, last");
      check.equal(
        answer.sessions.reduce((n, s) => n + s.requests, 0),
        LEDGER_SESSIONS_PER_HOUR + 8,
        "every request counted",
      );
      check.equal(answer.sessions.find((s) => s.session === name(0))?.requests, 3, "a kept session, added to");
      check.equal(
        answer.sessions.some((s) => s.session === name(LEDGER_SESSIONS_PER_HOUR + 10)),
        false,
        "a session past the bound is not named",
      );
    },
  },
];
