/**
 * Secret detection for user-supplied URLs (docs/web.md, "The order of steps", step 2). A URL that looks like it carries an API
 * key, a token or a password is refused before anything is fetched, cached or logged: fetching it
 * would hand the credential to a third party and keep it in our cache.
 *
 * The scan is linear in the URL's length: no regular expression runs on caller input; every
 * shape is matched by hand with precomputed run ends, so a crafted URL costs about what a plain
 * one of the same length does. A finding names the KIND of secret only, never the value or the URL.
 */

export interface SecretFinding {
  /** e.g. "OpenAI API key", "credential parameter 'api_key'", "password in the URL's user-info part". */
  kind: string;
}

// ---------------------------------------------------------------------------------------------
// Alphabets: which characters a key body is made of. Codes are ASCII; anything else is outside.

type Alphabet = (code: number) => boolean;
const isDigit: Alphabet = (c) => c >= 48 && c <= 57;
const isUpper: Alphabet = (c) => c >= 65 && c <= 90;
const isLower: Alphabet = (c) => c >= 97 && c <= 122;
const isAlnum: Alphabet = (c) => isDigit(c) || isUpper(c) || isLower(c);
const isUpperDigit: Alphabet = (c) => isDigit(c) || isUpper(c);
const isHex: Alphabet = (c) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
const isLowerHex: Alphabet = (c) => isDigit(c) || (c >= 97 && c <= 102);
/** `[A-Za-z0-9_-]`: base64url, and most vendors' key alphabet. */
const isWord: Alphabet = (c) => isAlnum(c) || c === 95 || c === 45;
/** `[A-Za-z0-9_]` */
const isAlnumUnderscore: Alphabet = (c) => isAlnum(c) || c === 95;
/** `[A-Za-z0-9+/=]`: base64. */
const isBase64: Alphabet = (c) => isAlnum(c) || c === 43 || c === 47 || c === 61;

/**
 * Per scanned text: for an alphabet, `end[i]` is where the run of its characters starting at i
 * stops. Built lazily (one backward pass) the first time a shape needs that alphabet.
 */
class RunEnds {
  private readonly memo = new Map<Alphabet, Int32Array>();
  constructor(readonly text: string) {}

  end(alphabet: Alphabet, from: number): number {
    let ends = this.memo.get(alphabet);
    if (!ends) {
      const n = this.text.length;
      ends = new Int32Array(n + 1);
      ends[n] = n;
      for (let i = n - 1; i >= 0; i--) ends[i] = alphabet(this.text.charCodeAt(i)) ? ends[i + 1]! : i;
      this.memo.set(alphabet, ends);
    }
    return from >= this.text.length ? this.text.length : ends[from]!;
  }
}

// ---------------------------------------------------------------------------------------------
// Vendor key shapes (the published rule sets, e.g. gitleaks', taken as facts)

interface PrefixShape {
  kind: string;
  /** Literal starts; the character before must not be a letter or digit. */
  prefixes: readonly string[];
  body: Alphabet;
  /** Least body length. */
  min: number;
  /** Exact body length; the character after it must then not be in `after` (default: `body`). */
  exact?: number;
  after?: Alphabet;
  /**
   * Least length of a key-like run in the body (0: the shape is enough). A body also counts when
   * it holds an unbroken letter-and-digit run of `min(min, SOLID_RUN)` characters, whatever its
   * entropy (`sk-` and 30 identical characters is a key); separators (`sk-hynix-memory-chip-…`)
   * break such a run, so a slug after a vendor-looking prefix is not one.
   */
  minRun: number;
}

const PREFIX_SHAPES: readonly PrefixShape[] = [
  { kind: "Anthropic API key", prefixes: ["sk-ant-"], body: isWord, min: 32, minRun: 16 },
  { kind: "OpenRouter API key", prefixes: ["sk-or-v1-"], body: isAlnum, min: 32, minRun: 24 },
  { kind: "OpenAI API key", prefixes: ["sk-"], body: isWord, min: 20, minRun: 20 },
  {
    kind: "Stripe secret key",
    prefixes: ["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
    body: isAlnum,
    min: 20,
    minRun: 20,
  },
  { kind: "Stripe webhook secret", prefixes: ["whsec_"], body: isAlnum, min: 32, minRun: 20 },
  { kind: "GitHub token", prefixes: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], body: isAlnum, min: 30, minRun: 30 },
  { kind: "GitHub token", prefixes: ["github_pat_"], body: isAlnumUnderscore, min: 40, minRun: 20 },
  {
    kind: "GitLab token",
    prefixes: ["glpat-", "gldt-", "glrt-", "glcbt-", "glimt-", "glsoat-"],
    body: isWord,
    min: 20,
    minRun: 16,
  },
  { kind: "GitLab pipeline trigger token", prefixes: ["glptt-"], body: isLowerHex, min: 40, minRun: 16 },
  {
    kind: "AWS access key ID",
    prefixes: ["AKIA", "ASIA", "ABIA", "ACCA"],
    body: isUpperDigit,
    min: 16,
    exact: 16,
    after: isAlnum,
    minRun: 0,
  },
  { kind: "Google API key", prefixes: ["AIza"], body: isWord, min: 35, exact: 35, minRun: 8 },
  { kind: "Google OAuth client secret", prefixes: ["GOCSPX-"], body: isWord, min: 28, minRun: 12 },
  { kind: "Google OAuth access token", prefixes: ["ya29."], body: isWord, min: 30, minRun: 12 },
  {
    kind: "Slack token",
    prefixes: ["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"],
    body: isWord,
    min: 20,
    minRun: 8,
  },
  { kind: "Slack app token", prefixes: ["xapp-"], body: isWord, min: 20, minRun: 8 },
  { kind: "Tavily API key", prefixes: ["tvly-"], body: isWord, min: 20, minRun: 20 },
  { kind: "Firecrawl API key", prefixes: ["fc-"], body: isAlnum, min: 24, minRun: 24 },
  { kind: "Hugging Face token", prefixes: ["hf_"], body: isAlnum, min: 30, minRun: 30 },
  { kind: "Jina API key", prefixes: ["jina_"], body: isWord, min: 40, minRun: 20 },
  { kind: "Groq API key", prefixes: ["gsk_"], body: isAlnum, min: 40, minRun: 40 },
  { kind: "xAI API key", prefixes: ["xai-"], body: isAlnum, min: 40, minRun: 40 },
  { kind: "Perplexity API key", prefixes: ["pplx-"], body: isAlnum, min: 40, minRun: 40 },
  { kind: "Replicate API token", prefixes: ["r8_"], body: isAlnum, min: 30, minRun: 30 },
  { kind: "npm token", prefixes: ["npm_"], body: isAlnum, min: 36, exact: 36, minRun: 36 },
  { kind: "PyPI token", prefixes: ["pypi-"], body: isWord, min: 50, minRun: 16 },
  { kind: "Shopify token", prefixes: ["shpat_", "shpca_", "shppa_", "shpss_"], body: isHex, min: 32, minRun: 16 },
  { kind: "DigitalOcean token", prefixes: ["dop_v1_", "doo_v1_", "dor_v1_"], body: isLowerHex, min: 64, minRun: 16 },
  {
    kind: "Azure storage account key",
    prefixes: ["AccountKey=", "SharedAccessKey="],
    body: isBase64,
    min: 20,
    minRun: 16,
  },
];

/** Key-likeness is judged on at most this many characters of a body (no key is longer at its start). */
const BODY_WINDOW = 128;
/** An unbroken `[A-Za-z0-9]` run this long after a vendor prefix is a key body, whatever its entropy. */
const SOLID_RUN = 20;

/**
 * One shape tried at one position. `judged` remembers, per shape, the run end of the last body it
 * judged: occurrences inside one run share that end, and the first (longest) body speaks for all,
 * so a run of repeated prefixes costs one judgement, not one per prefix.
 */
type Matcher = (text: string, at: number, runs: RunEnds, judged: Int32Array) => SecretFinding | null;

function prefixMatcher(shape: PrefixShape, prefix: string, index: number): Matcher {
  return (text, at, runs, judged) => {
    if (!text.startsWith(prefix, at)) return null;
    const start = at + prefix.length;
    const end = runs.end(shape.body, start);
    if (shape.exact !== undefined) {
      if (end - start < shape.exact) return null;
      const next = start + shape.exact;
      if (next < text.length && (shape.after ?? shape.body)(text.charCodeAt(next))) return null;
    } else if (end - start < shape.min) {
      return null;
    }
    if (shape.minRun === 0) return { kind: shape.kind };
    if (judged[index] === end) return null;
    judged[index] = end;
    const windowEnd = Math.min(end, start + (shape.exact ?? BODY_WINDOW));
    const solid = hasSolidRun(runs, start, windowEnd, Math.min(shape.min, SOLID_RUN));
    return solid || hasKeyLikeRun(text, start, windowEnd, shape.minRun) ? { kind: shape.kind } : null;
  };
}

/** True when [from, to) holds an unbroken `[A-Za-z0-9]` run of at least `length`; each run is stepped over in O(1). */
function hasSolidRun(runs: RunEnds, from: number, to: number, length: number): boolean {
  for (let at = from; at < to; ) {
    const end = Math.min(runs.end(isAlnum, at), to);
    if (end - at >= length) return true;
    at = end + 1;
  }
  return false;
}

/** JWTs: `eyJ…` header, `.`, payload, `.`, signature, judged in O(1) with run ends. */
const jsonWebToken: Matcher = (text, at, runs) => {
  if (!text.startsWith("eyJ", at)) return null;
  const headerEnd = runs.end(isWord, at);
  if (headerEnd - at < 13 || text.charCodeAt(headerEnd) !== 46) return null;
  const payload = headerEnd + 1;
  const payloadEnd = runs.end(isWord, payload);
  if (payloadEnd - payload < 10 || text.charCodeAt(payloadEnd) !== 46) return null;
  const signatureLength = runs.end(isWord, payloadEnd + 1) - (payloadEnd + 1);
  // A JSON payload (`eyJ`) makes it a JWT whatever the signature; otherwise ask for a signature.
  return (text.startsWith("eyJ", payload) && payloadEnd - payload >= 13) || signatureLength >= 16
    ? { kind: "JSON Web Token" }
    : null;
};

/** SendGrid: `SG.`, a key id of 16+ and a secret of 30+ base64url characters. */
const sendGridKey: Matcher = (text, at, runs) => {
  if (!text.startsWith("SG.", at)) return null;
  const id = at + 3;
  const idEnd = runs.end(isWord, id);
  if (idEnd - id < 16 || text.charCodeAt(idEnd) !== 46) return null;
  return runs.end(isWord, idEnd + 1) - (idEnd + 1) >= 30 ? { kind: "SendGrid API key" } : null;
};

const SLACK_WEBHOOK = "hooks.slack.com/services/T";
const slackWebhook: Matcher = (text, at, runs) => {
  if (!text.startsWith(SLACK_WEBHOOK, at)) return null;
  const team = at + SLACK_WEBHOOK.length;
  const teamEnd = runs.end(isUpperDigit, team);
  if (teamEnd - team < 6 || !text.startsWith("/B", teamEnd)) return null;
  const botEnd = runs.end(isUpperDigit, teamEnd + 2);
  if (botEnd - (teamEnd + 2) < 6 || text.charCodeAt(botEnd) !== 47) return null;
  return runs.end(isAlnum, botEnd + 1) - (botEnd + 1) >= 20 ? { kind: "Slack webhook URL" } : null;
};

function discordWebhook(host: string): Matcher {
  const path = `${host}/api/webhooks/`;
  return (text, at, runs) => {
    if (!text.startsWith(path, at)) return null;
    const id = at + path.length;
    const idEnd = runs.end(isDigit, id);
    if (idEnd - id < 17 || idEnd - id > 20 || text.charCodeAt(idEnd) !== 47) return null;
    return runs.end(isWord, idEnd + 1) - (idEnd + 1) >= 60 ? { kind: "Discord webhook URL" } : null;
  };
}

/**
 * Chat-bot tokens carried in a URL path. Telegram: `<5..16 digits>:<35 of [A-Za-z0-9_-]>` (as in
 * `api.telegram.org/bot<token>/getMe`), tried at the colon; the digits follow `bot` or a separator.
 * Right after `bot` (the Bot API's own path), a secret of 30 to 50 characters with a key-like run
 * (16 or more letters and digits mixed, hasKeyLikeRun) is one too: Telegram's documentation shows
 * a 34-character one (`bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11`); a slug's words and numbers
 * stay apart.
 */
const telegramBotToken: Matcher = (text, at, runs) => {
  let digits = 0;
  while (digits < 17 && at - digits - 1 >= 0 && isDigit(text.charCodeAt(at - digits - 1))) digits++;
  if (digits < 5 || digits > 16) return null;
  const before = at - digits;
  const afterBot = before >= 3 && text.slice(before - 3, before).toLowerCase() === "bot";
  if (before > 0 && isAlnum(text.charCodeAt(before - 1)) && !afterBot) return null;
  const length = runs.end(isWord, at + 1) - (at + 1);
  if (length === 35) return { kind: "Telegram bot token" };
  return afterBot && length >= 30 && length <= 50 && hasKeyLikeRun(text, at + 1, at + 1 + length, 16)
    ? { kind: "Telegram bot token" }
    : null;
};

/** Discord bot tokens: base64 user id (`M`/`N`/`O` and 23-25 more), `.`, 6 (timestamp), `.`, 27-38 (HMAC). */
const discordBotToken: Matcher = (text, at, runs) => {
  const idEnd = runs.end(isWord, at);
  if (idEnd - at < 24 || idEnd - at > 26 || text.charCodeAt(idEnd) !== 46) return null;
  const stampEnd = runs.end(isWord, idEnd + 1);
  if (stampEnd - (idEnd + 1) !== 6 || text.charCodeAt(stampEnd) !== 46) return null;
  const macLength = runs.end(isWord, stampEnd + 1) - (stampEnd + 1);
  return macLength >= 27 && macLength <= 38 ? { kind: "Discord bot token" } : null;
};

/** Microsoft Teams incoming webhooks: `…/IncomingWebhook/<32 hex>/<uuid>`. */
const TEAMS_WEBHOOK = "IncomingWebhook/";
const teamsWebhook: Matcher = (text, at, runs) => {
  if (!text.startsWith(TEAMS_WEBHOOK, at)) return null;
  const id = at + TEAMS_WEBHOOK.length;
  return runs.end(isHex, id) - id === 32 && text.charCodeAt(id + 32) === 47
    ? { kind: "Microsoft Teams webhook URL" }
    : null;
};

/** Google OAuth authorization codes, `4/0A` and 30+ base64url characters (the `code=` of a sign-in redirect). */
const googleAuthorizationCode: Matcher = (text, at, runs) => {
  if (!text.startsWith("4/0A", at)) return null;
  return runs.end(isWord, at + 4) - (at + 4) >= 30 ? { kind: "Google OAuth authorization code" } : null;
};

/** `-----BEGIN … PRIVATE KEY-----`, the label at most 30 upper-case letters and spaces. */
const privateKey: Matcher = (text, at) => {
  if (!text.startsWith("-----BEGIN", at)) return null;
  for (let i = at + 10; i < text.length && i <= at + 40; i++) {
    if (text.startsWith("PRIVATE KEY-----", i)) return { kind: "private key" };
    const c = text.charCodeAt(i);
    if (c !== 32 && !isUpper(c)) return null;
  }
  return null;
};

/**
 * Matchers by the two characters they start with (every shape starts with a fixed pair), so a
 * candidate position costs one map lookup and usually no matcher at all. `BOUNDED` ones apply
 * only where no letter or digit precedes.
 */
const BOUNDED = new Map<number, Matcher[]>();
const ANYWHERE = new Map<number, Matcher[]>();
const pairOf = (text: string, at: number) => text.charCodeAt(at) * 65_536 + text.charCodeAt(at + 1);
const register = (table: Map<number, Matcher[]>, start: string, matcher: Matcher) => {
  const key = pairOf(start, 0);
  table.set(key, [...(table.get(key) ?? []), matcher]);
};
let shapeCount = 0;
for (const shape of PREFIX_SHAPES) {
  const index = shapeCount++;
  for (const prefix of shape.prefixes) register(BOUNDED, prefix, prefixMatcher(shape, prefix, index));
}
register(BOUNDED, "eyJ", jsonWebToken);
register(BOUNDED, "SG.", sendGridKey);
register(BOUNDED, "hooks.", slackWebhook);
register(BOUNDED, "discord.com", discordWebhook("discord.com"));
register(BOUNDED, "discordapp.com", discordWebhook("discordapp.com"));
register(BOUNDED, "In", teamsWebhook);
register(BOUNDED, "4/", googleAuthorizationCode);
// Shapes whose second character is any key character: one entry per pair.
const WORD_CHARS = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"];
for (const second of WORD_CHARS) {
  register(ANYWHERE, `:${second}`, telegramBotToken);
  for (const first of "MNO") register(BOUNDED, first + second, discordBotToken);
}
register(ANYWHERE, "-----", privateKey);
const NONE: Matcher[] = [];
/** Where no letter or digit precedes, both kinds apply. */
const AT_BOUNDARY = new Map<number, Matcher[]>();
for (const key of new Set([...BOUNDED.keys(), ...ANYWHERE.keys()]))
  AT_BOUNDARY.set(key, [...(BOUNDED.get(key) ?? []), ...(ANYWHERE.get(key) ?? [])]);

const FIRST_CHARS = [...new Set([...BOUNDED.keys()].map((key) => String.fromCharCode(Math.floor(key / 65_536))))]
  .join("")
  .replace(/[-\]\\^]/g, "\\$&");
/**
 * Where a shape may start: a first character after a non-alphanumeric one (or at the start), or
 * a `:` / `-` anywhere. Fixed-width character classes only, so the search cannot backtrack.
 */
const CANDIDATE = new RegExp(`(?:^|[^A-Za-z0-9])[${FIRST_CHARS}]|[:-]`, "g");

/** Every vendor shape in one left-to-right pass: at each candidate only the shapes starting with its character. */
function vendorShape(text: string): SecretFinding | null {
  const runs = new RunEnds(text);
  const judged = new Int32Array(shapeCount).fill(-1);
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    // A two-character match is a separator (itself maybe `:` or `-`) and the shape's first letter.
    const last = m.index + m[0].length - 1;
    for (let at = m.index; at <= last; at++) {
      const pair = pairOf(text, at);
      const bounded = at === 0 || !isAlnum(text.charCodeAt(at - 1));
      for (const match of (bounded ? AT_BOUNDARY : ANYWHERE).get(pair) ?? NONE) {
        const found = match(text, at, runs, judged);
        if (found) return found;
      }
    }
    // The next candidate may begin at the letter just read (as the separator before another).
    CANDIDATE.lastIndex = last + 1;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Credential-named parameters

/**
 * Names (lower-cased, punctuation removed) of human-chosen secrets: any value but an empty one or
 * an obvious placeholder is a secret, since a password has no shape to tell it by (`hunter2`).
 */
const PASSWORD_NAMES = new Set([
  "password",
  "passwd",
  "pwd",
  "pass",
  "passphrase",
  "passcode",
  "secret",
  "clientsecret",
  "apisecret",
  "secretkey",
  "privatekey",
  "awssecretaccesskey",
  "secretaccesskey",
  "accountkey",
  "sharedaccesskey",
]);
const PASSWORD_SUFFIXES = ["password", "passwd", "passphrase", "secret", "secretkey", "privatekey"];

/**
 * Names of machine-issued credentials: a secret unless the value cannot be one (see
 * `cannotBeCredential`: a short identifier-like word such as `usdc`, a ticker such as `ERC20`).
 */
const CREDENTIAL_NAMES = new Set([
  "token",
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "authtoken",
  "apitoken",
  "sessiontoken",
  "securitytoken",
  "bearer",
  "jwt",
  "apikey",
  "xapikey",
  "authkey",
  "accesskey",
  "accesskeyid",
  "auth",
  "authorization",
  "sharedaccesssignature",
  "sig",
  "signature",
  "xamzsignature",
  "xamzcredential",
  "xamzsecuritytoken",
  "xgoogsignature",
  "xgoogcredential",
  "subscriptionkey",
  "subscriptiontoken",
  "xsubscriptiontoken",
  "authorizationcode",
  "authcode",
]);

/** Name endings that make any parameter credential-named (`github_token`, `my_api_key`). */
const CREDENTIAL_SUFFIXES = ["apikey", "token", "accesskey"];

/** Pagination and continuation names: cursors, not credentials, even though they end in "token". */
const NOT_CREDENTIAL_NAMES = new Set([
  "paginationtoken",
  "pagetoken",
  "nextpagetoken",
  "prevpagetoken",
  "previouspagetoken",
  "nexttoken",
  "prevtoken",
  "previoustoken",
  "continuationtoken",
  "continuation",
  "synctoken",
  "cursortoken",
  "cursor",
  "nextcursor",
  "resumptiontoken",
  "pagingtoken",
  "starttoken",
  "endtoken",
  "aftertoken",
  "beforetoken",
]);

/** Ambiguous names (`key=home`, `sid=...`): the value must look like key material (or be a UUID). */
const AMBIGUOUS_NAMES = new Set([
  "key",
  "appkey",
  "userkey",
  "devkey",
  "developerkey",
  "clientkey",
  "licensekey",
  "credential",
  "credentials",
  "sessionid",
  "jsessionid",
  "phpsessid",
  "sid",
  "csrftoken",
  "xsrftoken",
]);

/** Values of `auth`/`authorization` that name a sign-in method, not a credential (`?auth=google`). */
const AUTH_METHODS = new Set([
  "google",
  "github",
  "gitlab",
  "facebook",
  "apple",
  "microsoft",
  "twitter",
  "saml",
  "oauth",
  "oauth2",
  "oidc",
  "sso",
  "ldap",
  "email",
  "password",
  "basic",
  "login",
  "signin",
  "required",
  "optional",
]);

/** Values that stand for "put your key here" or "nothing" (compared lower-case without punctuation). */
const PLACEHOLDER_VALUES = new Set([
  "demokey",
  "demo",
  "sample",
  "samplekey",
  "example",
  "examplekey",
  "placeholder",
  "redacted",
  "changeme",
  "none",
  "null",
  "nil",
  "undefined",
  "na",
  "false",
  "true",
  "empty",
]);

/**
 * `password`: any real value; `credential`: a value that can be a credential; `ambiguous`: key
 * material only; `code`: an OAuth authorization code, only in a sign-in redirect's shape.
 */
type NameKind = "password" | "credential" | "ambiguous" | "code" | null;

/** Last letters of the suffixes: a name ending otherwise needs no `endsWith` at all. */
const SUFFIX_LAST_CHARS = new Set(
  [...CREDENTIAL_SUFFIXES, ...PASSWORD_SUFFIXES].map((suffix) => suffix.charCodeAt(suffix.length - 1)),
);

/**
 * What a parameter name says about its value. Pure and cheap (no memo): the common answer, an
 * ordinary name, costs three set lookups and one character test on the normalised name.
 */
function nameKind(name: string): NameKind {
  const n = alnumLower(name);
  // No name is both ambiguous and a pagination cursor, so the ambiguous set may be asked first.
  if (AMBIGUOUS_NAMES.has(n)) return "ambiguous";
  if (n === "code") return "code";
  if (PASSWORD_NAMES.has(n)) return "password";
  if (CREDENTIAL_NAMES.has(n)) return "credential";
  if (!SUFFIX_LAST_CHARS.has(n.charCodeAt(n.length - 1)) || NOT_CREDENTIAL_NAMES.has(n)) return null;
  if (PASSWORD_SUFFIXES.some((s) => n.endsWith(s))) return "password";
  return CREDENTIAL_SUFFIXES.some((s) => n.endsWith(s)) ? "credential" : null;
}

const MAX_NAME_CHARS = 64;
const isNameChar: Alphabet = (c) => isAlnum(c) || c === 95 || c === 46 || c === 45 || c === 91 || c === 93; // _ . - [ ]
// Parameters start after `?`, `&`, `;` or `#`; values also stop at `?`, so a nested URL's own are read.

const PARAM_START = /[?&;#]/g;
const VALUE_STOP = /[?&;#\s]/g;

/** One left-to-right pass over `name=value` pairs; each character is read at most twice. */
function credentialParameter(text: string): SecretFinding | null {
  /** Asked once per text, and only when a `code` parameter is met. */
  let oauthRedirect: boolean | null = null;
  PARAM_START.lastIndex = 0;
  for (let m = PARAM_START.exec(text); m !== null; m = PARAM_START.exec(text)) {
    const nameStart = m.index + 1;
    let j = nameStart;
    while (j < text.length && j - nameStart < MAX_NAME_CHARS && isNameChar(text.charCodeAt(j))) j++;
    if (j === nameStart || text.charCodeAt(j) !== 61) {
      PARAM_START.lastIndex = j;
      continue;
    }
    const valueStart = j + 1;
    VALUE_STOP.lastIndex = valueStart;
    const stop = VALUE_STOP.exec(text);
    const k = stop ? stop.index : text.length;
    if (k > valueStart) {
      const name = text.slice(nameStart, j);
      const kind = nameKind(name);
      if (kind !== null) {
        const value = percentDecodeFixpoint(text.slice(valueStart, k));
        if (kind === "code" && oauthRedirect === null) oauthRedirect = isOAuthRedirect(text);
        if (isSecretValue(kind, name, value, oauthRedirect === true))
          return { kind: kind === "code" ? "OAuth authorization code" : `credential parameter '${name}'` };
      }
    }
    PARAM_START.lastIndex = k;
  }
  return null;
}

function isSecretValue(kind: Exclude<NameKind, null>, name: string, value: string, oauthRedirect: boolean): boolean {
  if (value.trim() === "" || isPlaceholder(value)) return false;
  switch (kind) {
    case "password":
      return true;
    case "credential": {
      const n = alnumLower(name);
      if ((n === "auth" || n === "authorization") && AUTH_METHODS.has(value.toLowerCase())) return false;
      return !cannotBeCredential(value);
    }
    case "ambiguous":
      return looksLikeKeyMaterial(value);
    case "code":
      return oauthRedirect && looksLikeKeyMaterial(value);
  }
}

/** A sign-in redirect: a `state` parameter, or a path or host that says callback / oauth / auth / sign-in. */
const OAUTH_STATE = /[?&;#](?:session_)?state=/i;
const OAUTH_WORDS = /callback|oauth|auth|redirect|signin|sign-in|login/i;
function isOAuthRedirect(text: string): boolean {
  return OAUTH_STATE.test(text) || OAUTH_WORDS.test(text);
}

/** At most this many characters in an identifier-like word or a ticker (`ethereum`, `ERC1155`). */
const MAX_WORD = 20;

/**
 * True for a value no service issues as a credential: words of one case each (`usdc`, `Solana`,
 * `ERC`, `BTC`), a ticker with a short number (`ERC20`, `BEP2`, `ERC1155`), joined by `-`, `_` or
 * `.` (`usd-coin`, `BRK.B`). Mixed case inside a word (`dXNlcjpwYXNz`), digits in lower-case text
 * (`abc123`, `a1b2c3d4e5`), bare numbers (a one-time code) and long words stay credentials.
 * @example cannotBeCredential("ERC20") // true
 * @example cannotBeCredential("abc123") // false
 */
function cannotBeCredential(value: string): boolean {
  if (value.length > 2 * MAX_WORD) return false;
  let word = 0;
  let lower = 0;
  let upper = 0;
  let digits = 0;
  for (let i = 0; i <= value.length; i++) {
    const c = i < value.length ? value.charCodeAt(i) : 46;
    if (c === 45 || c === 95 || c === 46) {
      if (word === 0) return false;
      const allUpper = lower === 0 && upper > 0;
      const capitalised = upper === 1 && isUpper(value.charCodeAt(i - word)) && digits === 0;
      const plainLower = upper === 0 && lower > 0 && digits === 0;
      // A ticker's number comes after its letters and is short.
      if (
        digits > 0 &&
        !(allUpper && digits <= 4 && isDigit(value.charCodeAt(i - 1)) && isUpper(value.charCodeAt(i - word)))
      )
        return false;
      if (word - digits > MAX_WORD || !(allUpper || capitalised || plainLower)) return false;
      word = lower = upper = digits = 0;
      continue;
    }
    if (isLower(c)) {
      if (digits > 0) return false;
      lower++;
    } else if (isUpper(c)) {
      if (digits > 0) return false;
      upper++;
    } else if (isDigit(c)) digits++;
    else return false;
    word++;
  }
  return true;
}

/**
 * Obvious placeholders: `YOUR_API_KEY`, `your-token-here`, `<token>`, `{{api_key}}`, `${TOKEN}`,
 * `[key]`, `xxxx…`, `****`, `•••`, `DEMO_KEY`, `none`.
 */
function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (v.length >= 2) {
    const first = v[0]!;
    const last = v[v.length - 1]!;
    if (
      (first === "<" && last === ">") ||
      (first === "{" && last === "}") ||
      (first === "[" && last === "]") ||
      (v.startsWith("${") && last === "}") ||
      (first === "%" && last === "%")
    )
      return true;
  }
  let masked = true;
  for (const ch of v) {
    if (!"xX*•.#_-".includes(ch)) {
      masked = false;
      break;
    }
  }
  if (masked) return true;
  const n = alnumLower(v);
  return (
    n.startsWith("your") ||
    n.endsWith("here") ||
    n.startsWith("insert") ||
    n.startsWith("replace") ||
    PLACEHOLDER_VALUES.has(n)
  );
}

const UUID_GROUPS = [8, 4, 4, 4, 12];

function isHexKey(value: string): boolean {
  if (value.length < 16) return false;
  let digits = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!isHex(c)) return false;
    if (isDigit(c)) digits++;
  }
  return digits >= 2 && value.length - digits >= 2;
}

function isUuid(value: string): boolean {
  if (value.length !== 36) return false;
  let at = 0;
  for (const [g, length] of UUID_GROUPS.entries()) {
    for (let k = 0; k < length; k++) if (!isHex(value.charCodeAt(at++))) return false;
    if (g < UUID_GROUPS.length - 1 && value.charCodeAt(at++) !== 45) return false;
  }
  return true;
}

/**
 * For ambiguous names: a UUID, 16+ hex digits mixing digits and letters (a short hex key), or 20+
 * characters with a key-like run of 16 (not a SKU or a slug).
 */
function looksLikeKeyMaterial(value: string): boolean {
  if (isUuid(value) || isHexKey(value)) return true;
  if (value.length < 20) return false;
  return hasKeyLikeRun(value, 0, Math.min(value.length, BODY_WINDOW * 4), 16);
}

/**
 * True when text[from, to) has a run of at least `minRun` base64 characters that mixes letters with
 * digits, or both letter cases with enough variety, the way generated keys do and words and slugs
 * do not. One pass.
 */
function hasKeyLikeRun(text: string, from: number, to: number, minRun: number): boolean {
  let start = from;
  let digits = 0;
  let lower = 0;
  let upper = 0;
  let seen = new Set<number>();
  for (let i = from; i <= to; i++) {
    const c = i < to ? text.charCodeAt(i) : -1;
    if (c >= 0 && isBase64(c)) {
      if (isDigit(c)) digits++;
      else if (isLower(c)) lower++;
      else if (isUpper(c)) upper++;
      if (seen.size < 8) seen.add(c);
      continue;
    }
    const length = i - start;
    if (length >= minRun && seen.size >= Math.min(8, Math.ceil(length / 3))) {
      if (digits >= 2 && lower + upper >= 2) return true;
      if (lower >= 3 && upper >= 3 && length >= 16) return true;
    }
    start = i + 1;
    digits = lower = upper = 0;
    if (seen.size > 0) seen = new Set<number>();
  }
  return false;
}

function alnumLower(text: string): string {
  let plain = 0;
  while (plain < text.length && (isDigit(text.charCodeAt(plain)) || isLower(text.charCodeAt(plain)))) plain++;
  if (plain === text.length) return text; // already lower-case alphanumerics (`id`, `ref`, `page2`): no copy
  // Removed before lower-casing, so no other character can become an ASCII letter (the Kelvin sign → k).
  return text.replace(NOT_ASCII_ALNUM, "").toLowerCase();
}

const NOT_ASCII_ALNUM = /[^A-Za-z0-9]+/g;

// ---------------------------------------------------------------------------------------------
// Percent-decoding to a fixpoint, in one pass

/**
 * Decodes `%XX` escapes until none is left, however many times the text was encoded (`%2541` →
 * `A`), in one linear pass: each decoded character may complete an escape with what precedes
 * it, so the output works as a stack. Bytes become characters one to one (Latin-1): every shape
 * we look for is ASCII. Malformed escapes stay as they are.
 * @example percentDecodeFixpoint("sk%252Dproj") // "sk-proj"
 */
function percentDecodeFixpoint(text: string): string {
  if (!text.includes("%")) return text;
  // Fast path: one native round, then the stack pass below only if an escape is left.
  try {
    text = decodeURIComponent(text);
    if (!hasEscape(text)) return text;
  } catch {
    // A malformed escape somewhere: the stack pass leaves it as it is.
  }
  return decodeByStack(text);
}

function hasEscape(text: string): boolean {
  for (let at = text.indexOf("%"); at >= 0; at = text.indexOf("%", at + 1)) {
    if (isHex(text.charCodeAt(at + 1)) && isHex(text.charCodeAt(at + 2))) return true;
  }
  return false;
}

function decodeByStack(text: string): string {
  const out = new Uint16Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    out[n++] = text.charCodeAt(i);
    // The output can only end in a fresh escape after a write; each reduction shortens it by two.
    while (n >= 3 && out[n - 3] === 37 && isHex(out[n - 2]!) && isHex(out[n - 1]!)) {
      out[n - 3] = (hexValue(out[n - 2]!) << 4) | hexValue(out[n - 1]!);
      n -= 2;
    }
  }
  let decoded = "";
  // apply() takes the typed array as is; a spread would walk it through the iterator protocol.
  for (let i = 0; i < n; i += 8192)
    decoded += String.fromCharCode.apply(null, out.subarray(i, Math.min(n, i + 8192)) as unknown as number[]);
  return decoded;
}

function hexValue(code: number): number {
  return code <= 57 ? code - 48 : (code | 32) - 87;
}

// ---------------------------------------------------------------------------------------------

const ASCII_TAB_OR_NEWLINE = /[\t\n\r]/g;

/**
 * Find what looks like a secret in a URL: a vendor key shape anywhere in the URL, a credential-named
 * query or fragment parameter with a real (non-placeholder) value, or a password in the user-info
 * part. The raw URL and its fully percent-decoded form are checked.
 *
 * @example findSecretInUrl("https://x.dev/?password=hunter2") // { kind: "credential parameter 'password'" }
 * @example findSecretInUrl("https://x.dev/?api_key=YOUR_API_KEY") // null
 */
export function findSecretInUrl(rawUrl: string): SecretFinding | null {
  // URL parsers drop tabs and newlines, so a key split by one is still a key.
  const raw =
    rawUrl.includes("\t") || rawUrl.includes("\n") || rawUrl.includes("\r")
      ? rawUrl.replace(ASCII_TAB_OR_NEWLINE, "")
      : rawUrl;
  const userinfo = userInfoPassword(raw);
  if (userinfo) return userinfo;
  const decoded = percentDecodeFixpoint(raw);
  for (const form of decoded === raw ? [raw] : [raw, decoded]) {
    const found = vendorShape(form) ?? credentialParameter(form);
    if (found) return found;
    if (hasUserInfoPassword(form)) return { kind: "password in a URL's user-info part" };
  }
  return null;
}

function userInfoPassword(raw: string): SecretFinding | null {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return null;
  }
  return parsed.password !== "" ? { kind: "password in the URL's user-info part" } : null;
}

/** `//user:password@` anywhere (a nested URL): one pass, each `//` looks only up to the next `/`. */
function hasUserInfoPassword(text: string): boolean {
  for (let at = text.indexOf("//"); at >= 0; at = text.indexOf("//", at + 2)) {
    let colon = -1;
    for (let i = at + 2; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 47 || c === 63 || c === 35 || c === 32 || c === 9 || c === 10 || c === 13 || c === 12) break; // / ? # whitespace
      if (c === 64) {
        if (colon >= 0 && i > colon + 1) return true; // @ after a non-empty password
        break;
      }
      if (c === 58 && colon < 0) colon = i;
    }
  }
  return false;
}

/** Longest path a log line shows. */
const LOGGED_PATH_CHARS = 200;

/**
 * A caller's path as a log line may show it: withheld whole when it holds something shaped like a
 * secret (a bot token in a path, a key in a query), else cut to LOGGED_PATH_CHARS. A log is never
 * where a caller's secret ends up.
 *
 * @example loggedPath("/v1/messages") // "/v1/messages"
 * @example loggedPath("/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/getMe") // "(withheld: shaped like a secret)"
 */
export function loggedPath(path: string): string {
  return findSecretInUrl(`https://path.invalid${path.startsWith("/") ? "" : "/"}${path}`) === null
    ? path.slice(0, LOGGED_PATH_CHARS)
    : "(withheld: shaped like a secret)";
}
