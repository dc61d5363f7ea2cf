/**
 * What an image costs on a model the table does not know (an unknown name, a gateway's model behind
 * the OpenAI route), learned from billed usage: two requests of one session that differ by known
 * images differ in billed prompt by those images and by their text, so each pair gives a sample of
 * tokens per image. Kept per isolate (or process), bounded in models and sessions, and each sample
 * bounded, so a hostile upstream's usage can move an estimate only within sane limits
 * (docs/eviction.md, "Learned image cost").
 */
import { textTokens } from "../llm/estimate";
import type { WireFormat } from "../llm/format";
import { keepRecent } from "../recent";

/** A sample outside these bounds is not an image's cost (a cut-off usage, a changed system prompt, a hostile answer). */
export const LEARNED_IMAGE_TOKENS = { min: 16, max: 12_000 } as const;
/** Samples a model needs before its learned cost is used. */
const MIN_SAMPLES = 2;
/** A sample's weight is at least 1/this: one answer moves a settled estimate by a sixteenth of its error at most. */
const SETTLED_SAMPLES = 16;
/** Models and sessions remembered (most recently used kept), and the characters of a model name kept. */
const MODELS_HELD = 200;
const SESSIONS_HELD = 2_000;
const NAME_CHARS = 200;

/** One request as sent: its image blocks and its estimated text tokens (system, tools and messages). */
export interface SentShape {
  readonly images: number;
  readonly textTokens: number;
}

interface Learned {
  tokensPerImage: number;
  samples: number;
}

/** The image blocks and text tokens of a conversation as it is sent (`format` reads its images). */
export function sentShape(
  format: Pick<WireFormat, "inventory">,
  messages: readonly unknown[],
  outside: readonly unknown[] = [],
): SentShape {
  const { carriers, uploads } = format.inventory(messages);
  let images = uploads.length;
  for (const carrier of carriers) images += carrier.blocks;
  let text = textTokens(messages as unknown[]);
  for (const part of outside) text += textTokens(part);
  return { images, textTokens: text };
}

/**
 * The learner: `observe` each billed request of a session (its model, session key, what was sent
 * and the prompt the provider billed), `tokensPerImage` for the eviction's estimate.
 *
 * @example learner.observe("my-gateway-model", session, sentShape(OPENAI_CHAT, messages), usage.input + usage.cacheRead)
 */
export class ImageCostLearner {
  private readonly models = new Map<string, Learned>();
  private readonly sessions = new Map<string, SentShape & { prompt: number; model: string }>();

  observe(model: string, session: string, sent: SentShape, billedPrompt: number): void {
    const name = model.slice(0, NAME_CHARS);
    if (!Number.isFinite(billedPrompt) || billedPrompt < 0) return;
    const before = this.sessions.get(session);
    keepRecent(this.sessions, session, { ...sent, prompt: billedPrompt, model: name }, SESSIONS_HELD);
    if (!before || before.model !== name) return;
    const added = sent.images - before.images;
    if (added < 1) return;
    const sample = (billedPrompt - before.prompt - (sent.textTokens - before.textTokens)) / added;
    if (!(sample >= LEARNED_IMAGE_TOKENS.min && sample <= LEARNED_IMAGE_TOKENS.max)) return;
    const learned = this.models.get(name) ?? { tokensPerImage: sample, samples: 0 };
    const samples = learned.samples + 1;
    const tokensPerImage =
      learned.tokensPerImage + (sample - learned.tokensPerImage) / Math.min(samples, SETTLED_SAMPLES);
    keepRecent(this.models, name, { tokensPerImage, samples }, MODELS_HELD);
  }

  /** Tokens per image learned for `model`, once it has enough samples; undefined otherwise. */
  tokensPerImage(model: string | undefined): number | undefined {
    if (model === undefined) return undefined;
    const learned = this.models.get(model.slice(0, NAME_CHARS));
    return learned && learned.samples >= MIN_SAMPLES ? Math.round(learned.tokensPerImage) : undefined;
  }

  /** What was learned, per model (for `GET /v1/config`). */
  snapshot(): Record<string, { tokens_per_image: number; samples: number }> {
    const out: Record<string, { tokens_per_image: number; samples: number }> = Object.create(null);
    for (const [model, learned] of this.models)
      out[model] = { tokens_per_image: Math.round(learned.tokensPerImage), samples: learned.samples };
    return out;
  }
}

/** The isolate's (or process's) learner: the proxy feeds it, the eviction reads it. */
export const learnedImageCosts = new ImageCostLearner();
