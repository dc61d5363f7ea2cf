/**
 * Secret detection for user-supplied URLs (web.md step 2). A URL that looks like it carries an API
 * key, a token or a password is refused before anything is fetched, cached or logged: fetching it
 * would hand the credential to a third party and keep it in our cache.
 *
 * A finding names the KIND of secret only. It never contains the value or the URL.
 */

export interface SecretFinding {
  /** e.g. "OpenAI API key", "credential parameter 'api_key'", "password in the URL's user-info". */
  kind: string;
}

/** How many extra rounds of percent-decoding are checked after the raw form. */
const MAX_DECODE_ROUNDS = 4;

interface VendorShape {
  kind: string;
  /** Literal text every match contains; the regex only runs when one is present (hot path). */
  hints: readonly string[];
  /** Group 1, when present, is the random body that must look like key material. */
  pattern: RegExp;
  /** Minimum length of the longest letter/digit run in the body (0: the pattern is enough). */
  minRun: number;
  /** The shape contains characters outside `[A-Za-z0-9_.-]` ("/", spaces). */
  spansSeparators?: boolean;
}

// A key never starts in the middle of a word: "desk-..." or "mask_..." are not keys.
const B = "(?<![A-Za-z0-9])";

const VENDOR_SHAPES: readonly VendorShape[] = [
  { kind: "Anthropic API key", hints: ["sk-ant-"], pattern: re(`${B}sk-ant-(?:[a-z]+[0-9]{0,3}-)?([A-Za-z0-9_-]{32,})`), minRun: 16 },
  { kind: "OpenRouter API key", hints: ["sk-or-v1-"], pattern: re(`${B}sk-or-v1-([A-Za-z0-9]{32,})`), minRun: 24 },
  { kind: "OpenAI API key", hints: ["sk-"], pattern: re(`${B}sk-(?:proj-|svcacct-|admin-|None-)?([A-Za-z0-9_-]{20,})`), minRun: 20 },
  { kind: "Stripe secret key", hints: ["k_live_", "k_test_"], pattern: re(`${B}(?:sk|rk)_(?:live|test)_([A-Za-z0-9]{20,})`), minRun: 20 },
  { kind: "GitHub token", hints: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], pattern: re(`${B}gh[pousr]_([A-Za-z0-9]{30,})`), minRun: 30 },
  { kind: "GitHub token", hints: ["github_pat_"], pattern: re(`${B}github_pat_([A-Za-z0-9_]{40,})`), minRun: 20 },
  { kind: "GitLab token", hints: ["glpat-"], pattern: re(`${B}glpat-([A-Za-z0-9_-]{20,})`), minRun: 16 },
  { kind: "AWS access key ID", hints: ["AKIA", "ASIA"], pattern: re(`${B}(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])`), minRun: 0 },
  { kind: "Google API key", hints: ["AIza"], pattern: re(`${B}AIza([A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])`), minRun: 8 },
  { kind: "Google OAuth access token", hints: ["ya29."], pattern: re(`${B}ya29\\.([A-Za-z0-9_-]{30,})`), minRun: 12 },
  { kind: "Slack token", hints: ["xox"], pattern: re(`${B}xox[abposr]-([A-Za-z0-9-]{20,})`), minRun: 8 },
  { kind: "Slack app token", hints: ["xapp-"], pattern: re(`${B}xapp-([A-Za-z0-9-]{20,})`), minRun: 8 },
  { kind: "Slack webhook URL", hints: ["hooks.slack.com/services/"], pattern: re(`hooks\\.slack\\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/([A-Za-z0-9]{20,})`), minRun: 20, spansSeparators: true },
  { kind: "Tavily API key", hints: ["tvly-"], pattern: re(`${B}tvly-(?:dev-|prod-)?([A-Za-z0-9]{20,})`), minRun: 20 },
  { kind: "Firecrawl API key", hints: ["fc-"], pattern: re(`${B}fc-([A-Za-z0-9]{24,})`), minRun: 24 },
  { kind: "Hugging Face token", hints: ["hf_"], pattern: re(`${B}hf_([A-Za-z0-9]{30,})`), minRun: 30 },
  { kind: "Jina API key", hints: ["jina_"], pattern: re(`${B}jina_([A-Za-z0-9_-]{40,})`), minRun: 20 },
  { kind: "Groq API key", hints: ["gsk_"], pattern: re(`${B}gsk_([A-Za-z0-9]{40,})`), minRun: 40 },
  { kind: "xAI API key", hints: ["xai-"], pattern: re(`${B}xai-([A-Za-z0-9]{40,})`), minRun: 40 },
  { kind: "Perplexity API key", hints: ["pplx-"], pattern: re(`${B}pplx-([A-Za-z0-9]{40,})`), minRun: 40 },
  { kind: "Replicate API token", hints: ["r8_"], pattern: re(`${B}r8_([A-Za-z0-9]{30,})`), minRun: 30 },
  { kind: "npm token", hints: ["npm_"], pattern: re(`${B}npm_([A-Za-z0-9]{36})(?![A-Za-z0-9])`), minRun: 36 },
  { kind: "SendGrid API key", hints: ["SG."], pattern: re(`${B}SG\\.([A-Za-z0-9_-]{16,})\\.[A-Za-z0-9_-]{30,}`), minRun: 8 },
  {
    kind: "JSON Web Token",
    hints: ["eyJ"],
    pattern: re(`${B}eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]*|${B}eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{16,}`),
    minRun: 0,
  },
  { kind: "private key", hints: ["PRIVATE KEY-----"], pattern: re(`-----BEGIN[ A-Z]*PRIVATE KEY-----`), minRun: 0, spansSeparators: true },
];

const SPANNING_SHAPES = VENDOR_SHAPES.filter((shape) => shape.spansSeparators === true);
const TOKEN_SHAPES = VENDOR_SHAPES.filter((shape) => shape.spansSeparators !== true);

function re(source: string): RegExp {
  return new RegExp(source, "g");
}

/**
 * Query/fragment parameter names (lower-cased, punctuation removed) that always carry a credential.
 * A value of 8+ characters that is not a single plain word is enough.
 */
const STRONG_PARAM_NAMES = new Set([
  "apikey", "xapikey", "apitoken", "apisecret", "accesstoken", "accesskey", "accesskeyid",
  "authtoken", "authkey", "refreshtoken", "idtoken", "sessiontoken", "securitytoken",
  "clientsecret", "secret", "secretkey", "secretaccesskey", "privatekey", "password", "passwd",
  "pwd", "passphrase", "xamzsignature", "xamzcredential", "xamzsecuritytoken", "xgoogsignature",
  "xgoogcredential", "bearer", "jwt", "subscriptionkey", "subscriptiontoken", "xsubscriptiontoken",
]);

/** Name endings that make any parameter a strong credential name (`github_token`, `my_api_key`). */
const STRONG_NAME_SUFFIXES = ["apikey", "secret", "password", "accesstoken", "authtoken", "secretkey", "privatekey"];

/**
 * Ambiguous names (`key=home`, `auth=google`, `sig=abc`): the value must look like key material
 * (12+ characters, a run of mixed letters and digits), or be a UUID (Exa-style keys).
 */
const WEAK_PARAM_NAMES = new Set([
  "key", "token", "auth", "authorization", "sig", "signature", "credential", "credentials",
  "sessionid", "jsessionid", "phpsessid", "sid",
]);

/** Names ending in "token" that are pagination cursors, not credentials. */
const NOT_CREDENTIAL_NAMES = new Set(["pagetoken", "nextpagetoken", "continuationtoken", "synctoken", "nexttoken", "cursortoken"]);

// Values stop at "?" too, so a URL nested in a parameter has its own parameters checked.
const PARAM_PATTERN = /[?&;#]([A-Za-z0-9_.\-[\]]{1,64})=([^?&;#\s]*)/g;
const USERINFO_PASSWORD = /\/\/[^/?#@\s:]*:[^/?#@\s]+@/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const ASCII_TAB_OR_NEWLINE = /[\t\n\r]/g;

/**
 * Find what looks like a secret in a URL: a vendor key shape anywhere in the URL, a credential-named
 * query or fragment parameter with a non-trivial value, or a password in the user-info part. The
 * raw URL and each percent-decoded form (decoded repeatedly; malformed escapes are left as they
 * are) are checked.
 *
 * @example findSecretInUrl("https://x.dev/?api_key=Zx81kQ2mP0aL7vN3") // { kind: "credential parameter 'api_key'" }
 * @example findSecretInUrl("https://x.dev/docs/api_key-rotation") // null
 */
export function findSecretInUrl(rawUrl: string): SecretFinding | null {
  const forms = decodedForms(/[\t\n\r]/.test(rawUrl) ? rawUrl.replace(ASCII_TAB_OR_NEWLINE, "") : rawUrl);
  const first = forms[0] ?? "";
  const userinfo = userInfoPassword(first);
  if (userinfo) return userinfo;
  for (const form of forms) {
    const found = vendorShape(form) ?? credentialParameter(form);
    if (found) return found;
    if (USERINFO_PASSWORD.test(form)) return { kind: "password in a URL's user-info part" };
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

/** The raw text followed by each distinct percent-decoded form. */
function decodedForms(raw: string): string[] {
  const forms = [raw];
  let current = raw;
  for (let round = 0; round < MAX_DECODE_ROUNDS && current.includes("%"); round++) {
    const next = percentDecodeTolerant(current);
    if (next === current) break;
    forms.push(next);
    current = next;
  }
  return forms;
}

/** Decode every well-formed `%XX` run; a run that is not valid UTF-8 is decoded byte by byte. */
export function percentDecodeTolerant(text: string): string {
  try {
    // Fast path: the whole string decodes (the common case, several times faster than run by run).
    return decodeURIComponent(text);
  } catch {
    // A malformed escape somewhere: decode run by run below.
  }
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      let out = "";
      for (let i = 0; i < run.length; i += 3) out += String.fromCharCode(parseInt(run.slice(i + 1, i + 3), 16));
      return out;
    }
  });
}

/**
 * Key candidates: runs of the characters vendor keys are made of. Every shape below fits in one
 * such run and none is shorter than 20 characters, so ordinary URLs (short path segments and
 * values) skip the per-vendor regexes entirely. Boundaries are unchanged: a run starts and ends
 * next to a character outside the run alphabet, which the shapes' own boundaries also accept.
 */
const MIN_KEY_LENGTH = 20;

function isKeyChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) ||
    code === 95 || code === 46 || code === 45 // _ . -
  );
}

function vendorShape(text: string): SecretFinding | null {
  // One linear pass, no allocation for the many short runs of an ordinary URL.
  let runStart = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && isKeyChar(text.charCodeAt(i))) continue;
    if (i - runStart >= MIN_KEY_LENGTH) {
      const found = matchShapes(text.slice(runStart, i), TOKEN_SHAPES);
      if (found) return found;
    }
    runStart = i + 1;
  }
  // The few shapes that span other characters ("/", spaces) are checked on the whole text.
  return matchShapes(text, SPANNING_SHAPES);
}

function matchShapes(text: string, shapes: readonly VendorShape[]): SecretFinding | null {
  for (const shape of shapes) {
    if (!shape.hints.some((hint) => text.includes(hint))) continue;
    shape.pattern.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = shape.pattern.exec(text)) !== null) {
      const body = match[1];
      if (shape.minRun === 0 || body === undefined || hasKeyLikeRun(body, shape.minRun)) return { kind: shape.kind };
    }
  }
  return null;
}

function credentialParameter(text: string): SecretFinding | null {
  PARAM_PATTERN.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = PARAM_PATTERN.exec(text)) !== null) {
    const name = match[1] ?? "";
    const value = match[2] ?? "";
    if (value === "") continue;
    const strength = credentialNameStrength(name);
    if (strength === "strong" ? isNonTrivialSecret(value) : strength === "weak" && looksLikeKeyMaterial(value)) {
      return { kind: `credential parameter '${name}'` };
    }
  }
  return null;
}

type NameStrength = "strong" | "weak" | null;
/** Parameter names repeat across requests (`id`, `q`, `ref`); a small memo keeps the scan cheap. */
const nameStrengthMemo = new Map<string, NameStrength>();

function credentialNameStrength(name: string): NameStrength {
  let strength = nameStrengthMemo.get(name);
  if (strength === undefined) {
    strength = classifyParameterName(name);
    if (nameStrengthMemo.size >= 1024) nameStrengthMemo.clear();
    nameStrengthMemo.set(name, strength);
  }
  return strength;
}

function classifyParameterName(name: string): NameStrength {
  const n = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (NOT_CREDENTIAL_NAMES.has(n)) return null;
  if (STRONG_PARAM_NAMES.has(n)) return "strong";
  if (STRONG_NAME_SUFFIXES.some((s) => n.endsWith(s))) return "strong";
  if (WEAK_PARAM_NAMES.has(n) || n.endsWith("token")) return "weak";
  return null;
}

/** For always-credential names: 8+ characters and not one plain word of a single letter case. */
function isNonTrivialSecret(value: string): boolean {
  if (value.length < 8) return false;
  if (/^(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)$/.test(value)) return false;
  if (/^(.)\1*$/.test(value)) return false;
  return true;
}

/** For ambiguous names: a UUID, or 12+ characters with a run of mixed letters and digits. */
function looksLikeKeyMaterial(value: string): boolean {
  if (UUID.test(value)) return true;
  if (value.length < 12) return false;
  return hasKeyLikeRun(value, 10);
}

/**
 * True when the text has a run of at least `minRun` characters from the key alphabet
 * (letters, digits, and base64's `+/=`) that mixes letters with digits, or both letter cases with
 * enough variety, the way generated keys do and words and slugs do not.
 */
function hasKeyLikeRun(text: string, minRun: number): boolean {
  const runs = text.match(/[A-Za-z0-9+/=]+/g);
  if (!runs) return false;
  for (const run of runs) {
    if (run.length < minRun) continue;
    const digits = countMatches(run, /[0-9]/g);
    const lower = countMatches(run, /[a-z]/g);
    const upper = countMatches(run, /[A-Z]/g);
    const distinct = new Set(run).size;
    if (distinct < Math.min(8, Math.ceil(run.length / 3))) continue;
    if (digits >= 2 && lower + upper >= 2) return true;
    if (lower >= 3 && upper >= 3 && run.length >= 16) return true;
  }
  return false;
}

function countMatches(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}
