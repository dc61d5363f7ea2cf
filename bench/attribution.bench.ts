/**
 * How close the ledger's "as sent" comes to the real thing (docs/stats.md, "The service's own
 * saving"): each session is played twice against the LLM emulator, with its word-piece tokenizer
 * (`x-emulator-tokenizer: words`, not chars / 4): once exactly as the agent wrote it, straight to
 * the emulator (the direct bill), and once through the service under `wrangler dev` (the bill
 * through it, and the ledger's `cost_as_sent_usd` for the same session). The as-sent estimate's
 * error is against the direct bill; a text-only session's saving against zero.
 * Run: npm run bench -- attribution
 */
import { modelRules, usageCost } from "../shared/llm/models.table";
import { encodePng, screenshotPixels } from "../test/fixtures/images";
import { agentKeyHeader, agentPath, agentRequest, type AgentSession } from "../test/support/agent-sessions";
import { startLocalStack } from "../scripts/local-stack";

const TOKENIZER = { "x-emulator-tokenizer": "words" };

const provider = (session: AgentSession) => (session.format === "anthropic" ? "anthropic" : "openai");

/** The usage of one JSON answer in the ledger's kinds. */
function usageOf(session: AgentSession, u: any) {
  return session.format === "anthropic"
    ? {
        input: u.input_tokens,
        cacheWrite5m: u.cache_creation?.ephemeral_5m_input_tokens ?? u.cache_creation_input_tokens,
        cacheWrite1h: u.cache_creation?.ephemeral_1h_input_tokens ?? 0,
        cacheRead: u.cache_read_input_tokens,
        output: u.output_tokens,
      }
    : {
        input: u.prompt_tokens - (u.prompt_tokens_details?.cached_tokens ?? 0),
        cacheWrite5m: 0,
        cacheWrite1h: 0,
        cacheRead: u.prompt_tokens_details?.cached_tokens ?? 0,
        output: u.completion_tokens,
      };
}

/** Plays `session` to `base` (the emulator's provider root, or the service's `/anthropic`, `/openai`); the billed USD. */
async function play(session: AgentSession, base: string, key: string): Promise<number> {
  const prices = modelRules(provider(session), session.model).prices;
  let usd = 0;
  for (let turn = 1; turn <= session.turns; turn++) {
    const response = await fetch(`${base}${agentPath(session)}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-session-id": `attribution-${session.tag}`,
        ...TOKENIZER,
        ...agentKeyHeader(session, key),
      },
      body: JSON.stringify(agentRequest(session, turn)),
    });
    const body = (await response.json()) as { usage?: unknown };
    if (!response.ok || !body.usage)
      throw new Error(`turn ${turn}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    usd += usageCost(prices, usageOf(session, body.usage)).costUsd;
  }
  return usd;
}

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

async function shots(count: number, width: number, height: number): Promise<string[]> {
  const out: string[] = [];
  for (let s = 0; s < count; s++)
    out.push(toBase64(await encodePng(screenshotPixels(width, height, 70 + s), width, height, 3)));
  return out;
}

async function main(): Promise<void> {
  const run = Date.now().toString(36);
  const small = await shots(6, 1200, 900);
  const large = await shots(6, 1800, 1000);
  const sessions: (AgentSession & { label: string })[] = [
    {
      label: "Sonnet 4.5, 45 screenshots (1200×900) in 60 turns",
      format: "anthropic",
      model: `claude-sonnet-4-5-a${run}`,
      tag: `a${run}`,
      turns: 60,
      shots: small,
      shotEvery: 4,
    },
    {
      label: "Sonnet 4.5, text only, 30 turns",
      format: "anthropic",
      model: `claude-sonnet-4-5-b${run}`,
      tag: `b${run}`,
      turns: 30,
      shots: [],
    },
    {
      label: "Haiku 5.5, 45 screenshots (1800×1000, fitted) in 60 turns",
      format: "anthropic",
      model: `claude-haiku-5-5-c${run}`,
      tag: `c${run}`,
      turns: 60,
      shots: large,
      shotEvery: 4,
    },
    {
      label: "gpt-4o chat, 24 screenshots (1800×1000, fitted) in 24 turns",
      format: "chat",
      model: `gpt-4o-d${run}`,
      tag: `d${run}`,
      turns: 24,
      shots: large,
    },
    {
      label: "gpt-4o chat, text only, 24 turns",
      format: "chat",
      model: `gpt-4o-e${run}`,
      tag: `e${run}`,
      turns: 24,
      shots: [],
    },
  ];
  const stack = await startLocalStack({ vars: { LEDGER_FLUSH_MS: "0" } });
  const rows: string[] = [];
  try {
    for (const session of sessions) {
      const direct = await play(session, `${stack.emulatorUrl}/llm/${provider(session)}`, `direct-${session.tag}`);
      const through = await play(session, `${stack.url}/${provider(session)}`, `proxy-${session.tag}`);
      // The ledger writes off the request path: wait until the session's last answer is in it.
      let row: any;
      for (let tries = 0; tries < 100; tries++) {
        await fetch(`${stack.url}/healthz`);
        const stats = (await (await fetch(`${stack.url}/v1/stats?window=1h`)).json()) as any;
        row = stats.by_model.llm[session.model];
        if (row?.requests === session.turns && Math.abs(row.cost_usd - through) < 1e-6) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const asSent = row.cost_as_sent_usd as number;
      const error = (asSent - direct) / direct;
      const text = session.shots.length === 0;
      rows.push(
        `| ${session.label} | $${direct.toFixed(4)} | $${through.toFixed(4)} | $${(direct - through).toFixed(4)} | $${asSent.toFixed(4)} | $${row.saved_usd.toFixed(4)} | ${(error * 100).toFixed(2)} % | ${text ? "text only" : Math.abs(error) <= 0.03 ? "within 3 %" : "OVER 3 %"} |`,
      );
      console.error(rows.at(-1));
    }
  } finally {
    await stack.stop();
  }
  console.log(
    "| session | direct bill (as the agent sent it) | billed through the service | measured saving | ledger: as sent | ledger: saved_usd | as sent vs direct | target |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(`\n(${new Date().toISOString().slice(0, 10)}, npm run bench -- attribution, emulator tokenizer: words)`);
}

await main();
