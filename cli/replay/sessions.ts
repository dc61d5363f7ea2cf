/**
 * Sessions for the replay: generated ones (N turns, a screenshot every k turns, given token sizes),
 * their pace (think time and pauses), and the random sessions `--random` and the property tests
 * draw from a seed.
 */
import { DEFAULT_THINK_MS, type ReplayRequest, type Segment } from "./cache.models";

/** One turn of a compact session: new text and images appended to the history. */
export interface ReplayTurn {
  readonly textTokens: number;
  readonly images: ReadonlyArray<{ readonly tokens: number; readonly bytes: number; readonly upload?: boolean }>;
}

/** Inputs of a generated session. */
export interface SessionShape {
  readonly turns: number;
  readonly images: number;
  /** One screenshot every this many turns, from `firstImageTurn` (1-based). */
  readonly imageEvery?: number;
  readonly firstImageTurn?: number;
  readonly textTokens?: number;
  readonly imageTokens?: number;
  readonly imageBytes?: number;
}

export const DEFAULT_SESSION = {
  turns: 80,
  images: 60,
  imageEvery: 1,
  firstImageTurn: 2,
  textTokens: 1_000,
  imageTokens: 1_500,
  imageBytes: 350_000,
  systemTokens: 4_000,
} as const;

/** A synthetic agent session: text every turn, a tool screenshot every `imageEvery` turns. */
export function generateSession(shape: SessionShape): ReplayTurn[] {
  const every = Math.max(1, shape.imageEvery ?? DEFAULT_SESSION.imageEvery);
  const first = shape.firstImageTurn ?? DEFAULT_SESSION.firstImageTurn;
  const image = {
    tokens: shape.imageTokens ?? DEFAULT_SESSION.imageTokens,
    bytes: shape.imageBytes ?? DEFAULT_SESSION.imageBytes,
  };
  let placed = 0;
  return Array.from({ length: shape.turns }, (_, i) => {
    const turn = i + 1;
    const due = turn >= first && (turn - first) % every === 0 && placed < shape.images;
    if (due) placed += 1;
    return { textTokens: shape.textTokens ?? DEFAULT_SESSION.textTokens, images: due ? [image] : [] };
  });
}

/**
 * The requests of a compact session: request t is the system prompt plus turns 1..t. Each turn is
 * one message standing for one answered request; its tool images form one carrier.
 */
export function requestsFromTurns(turns: readonly ReplayTurn[], systemTokens: number): ReplayRequest[] {
  const history: Segment[] = [{ id: "system", tokens: systemTokens, message: -1 }];
  return turns.map((turn, i) => {
    const message = i + 1;
    history.push({ id: `turn${message}:text`, tokens: turn.textTokens, message, answer: true });
    turn.images.forEach((image, j) => {
      history.push({
        id: `turn${message}:image${j}`,
        tokens: image.tokens,
        message,
        image: { kind: image.upload ? "upload" : "tool", carrier: `turn${message}`, bytes: image.bytes },
      });
    });
    return history.slice();
  });
}

/** The pace of a generated session: think time per turn, and optional long pauses. */
export interface SessionPace {
  /** Seconds between two requests (the agent's and the model's think time). */
  readonly thinkSeconds?: number;
  /** A pause after every this many requests (0: none). */
  readonly pauseEvery?: number;
  readonly pauseMinutes?: number;
}

/**
 * When each request of a generated session is sent (ms from the first).
 *
 * @example
 * requestTimes(4, { thinkSeconds: 30, pauseEvery: 2, pauseMinutes: 8 }) // [0, 30000, 540000, 570000]
 */
export function requestTimes(count: number, pace: SessionPace = {}): number[] {
  const think = (pace.thinkSeconds ?? DEFAULT_THINK_MS / 1000) * 1000;
  const every = pace.pauseEvery ?? 0;
  const pause = (pace.pauseMinutes ?? 0) * 60_000;
  const times: number[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (i > 0) at += think + (every > 0 && i % every === 0 ? pause : 0);
    times.push(at);
  }
  return times;
}

/** A generated session with its pace: what the random comparisons draw. */
export interface RandomSession extends SessionShape, SessionPace {
  readonly imageEvery: number;
  readonly textTokens: number;
  readonly imageTokens: number;
  readonly systemTokens: number;
  readonly thinkSeconds: number;
  /** 0: no pauses. */
  readonly pauseEvery: number;
  readonly pauseMinutes: number;
}

/**
 * The ranges random sessions are drawn from (inclusive), shared by the property tests and
 * `npm run replay -- --random N`: 1-90 turns, 0-90 images every 1-4 turns, text 100-3,000 and
 * images 200-3,000 tokens, a system prompt of 500-8,000, 5-120 s between requests, and in half of
 * the sessions a pause every 5-30 requests of 1-20 minutes.
 */
export const RANDOM_SESSION_RANGES = Object.freeze({
  turns: [1, 90],
  images: [0, 90],
  imageEvery: [1, 4],
  textTokens: [100, 3_000],
  imageTokens: [200, 3_000],
  systemTokens: [500, 8_000],
  thinkSeconds: [5, 120],
  pauseEvery: [5, 30],
  pauseMinutes: [1, 20],
} as const);

/** `count` random sessions from a seed (a small xorshift generator: the same seed, the same sessions). */
export function randomSessions(count: number, seed: number): RandomSession[] {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const draw = ([min, max]: readonly [number, number]) => min + Math.floor(next() * (max - min + 1));
  const r = RANDOM_SESSION_RANGES;
  return Array.from({ length: count }, () => ({
    turns: draw(r.turns),
    images: draw(r.images),
    imageEvery: draw(r.imageEvery),
    textTokens: draw(r.textTokens),
    imageTokens: draw(r.imageTokens),
    systemTokens: draw(r.systemTokens),
    thinkSeconds: draw(r.thinkSeconds),
    pauseEvery: next() < 0.5 ? 0 : draw(r.pauseEvery),
    pauseMinutes: draw(r.pauseMinutes),
  }));
}

/** How many images a compact session actually places (fewer than asked when turns run out). */
export const imagesIn = (turns: readonly ReplayTurn[]) => turns.reduce((n, t) => n + t.images.length, 0);

/**
 * The suite's sessions on models with a price tier (docs/eviction.md, "Prices as billed"): heavy
 * screenshot sessions whose text alone passes the tier's line near the end, so keep-3 too sends
 * some requests over it.
 */
export const TIER_SESSIONS = [
  {
    name: "Haiku 5.5: 60 screenshots, 80 turns, 1,400 text tokens a turn",
    model: "claude-haiku-5-5",
    shape: { turns: 80, images: 60, textTokens: 1_400, imageTokens: 1_600 },
  },
  {
    name: "Sonnet 4.5 1M: 75 screenshots, 100 turns, 2,000 text tokens a turn",
    model: "claude-sonnet-4-5",
    shape: { turns: 100, images: 75, textTokens: 2_000, imageTokens: 1_600 },
  },
] as const;
