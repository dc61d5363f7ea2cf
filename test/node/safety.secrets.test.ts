import { describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import { assertNoSecretInUrls } from "../../shared/safety/gate";
import { findSecretInUrl } from "../../shared/safety/secrets";

// Built from parts so no scanner mistakes this test file for a leaked credential.
const alnum = (n: number, seed = 7): string => {
  const chars = "aB3xK9mQ2pL7vN4tR8sW1zY6cD5fG0hJ";
  let out = "";
  for (let i = 0; i < n; i++) out += chars[(i * seed + 3) % chars.length];
  return out;
};
const hex = (n: number): string => Array.from({ length: n }, (_, i) => "0123456789abcdef"[(i * 7 + 5) % 16]).join("");
const encodeAll = (s: string): string =>
  [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join("");

const OPENAI = `sk-${alnum(48)}`;
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${alnum(43, 11)}`;

const REFUSED: Array<[label: string, url: string, kind: string]> = [
  ["OpenAI legacy key in the path", `https://example.com/v1/${OPENAI}/models`, "OpenAI API key"],
  ["OpenAI project key in a query", `https://example.com/?k=sk-proj-${alnum(40)}_${alnum(30, 5)}`, "OpenAI API key"],
  ["Anthropic key", `https://example.com/?x=sk-ant-api03-${alnum(80)}`, "Anthropic API key"],
  ["GitHub classic token", `https://example.com/repo?t=ghp_${alnum(36)}`, "GitHub token"],
  ["GitHub OAuth token", `https://example.com/gho_${alnum(36, 3)}`, "GitHub token"],
  ["GitHub app token", `https://example.com/cb?x=ghs_${alnum(36, 5)}`, "GitHub token"],
  ["GitHub fine-grained token", `https://example.com/?v=github_pat_11${alnum(20)}_${alnum(59, 3)}`, "GitHub token"],
  ["AWS access key id", `https://example.com/?id=AKIA${alnum(16).toUpperCase()}`, "AWS access key ID"],
  ["AWS temporary key id", `https://example.com/creds/ASIA${alnum(16, 3).toUpperCase()}`, "AWS access key ID"],
  ["Google API key", `https://maps.example.com/js?callback=init&k=AIza${alnum(35)}`, "Google API key"],
  ["Slack bot token", `https://example.com/?t=xoxb-1234567890-1234567890123-${alnum(24)}`, "Slack token"],
  ["Stripe live secret key", `https://example.com/pay/sk_live_${alnum(24)}`, "Stripe secret key"],
  ["Stripe restricted key", `https://example.com/?k=rk_live_${alnum(24, 3)}`, "Stripe secret key"],
  ["SendGrid API key", `https://example.com/?x=SG.${alnum(22)}.${alnum(43, 3)}`, "SendGrid API key"],
  ["Tavily key", `https://example.com/?t=tvly-${alnum(32)}`, "Tavily API key"],
  ["Firecrawl key", `https://example.com/scrape/fc-${hex(32)}`, "Firecrawl API key"],
  ["Hugging Face token", `https://example.com/?h=hf_${alnum(34)}`, "Hugging Face token"],
  ["JSON Web Token", `https://example.com/callback/${JWT}`, "JSON Web Token"],
  [
    "Exa-style UUID key in a credential parameter",
    "https://example.com/search?x-api-key=3f1c9a2e-7b4d-4e8f-9a6b-2c5d8e1f0a37",
    "credential parameter 'x-api-key'",
  ],
  [
    "UUID in an ambiguous 'key' parameter",
    "https://example.com/search?key=3f1c9a2e-7b4d-4e8f-9a6b-2c5d8e1f0a37",
    "credential parameter 'key'",
  ],
  [
    "api_key parameter",
    `https://api.example.com/v1/data?format=json&api_key=${alnum(20)}`,
    "credential parameter 'api_key'",
  ],
  ["apiKey parameter", `https://api.example.com/v1/data?apiKey=${alnum(16, 3)}`, "credential parameter 'apiKey'"],
  [
    "access_token parameter",
    `https://graph.example.com/me?access_token=${alnum(40)}`,
    "credential parameter 'access_token'",
  ],
  [
    "access_token in the fragment",
    `https://app.example.com/cb#access_token=${alnum(30)}&token_type=bearer`,
    "credential parameter 'access_token'",
  ],
  [
    "S3 presigned URL",
    `https://bucket.s3.amazonaws.com/f.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=${hex(64)}`,
    "credential parameter 'X-Amz-Credential'",
  ],
  [
    "Azure SAS signature",
    `https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sig=${alnum(43)}%3D`,
    "credential parameter 'sig'",
  ],
  [
    "client_secret parameter",
    `https://auth.example.com/token?client_id=abc&client_secret=${alnum(32)}`,
    "credential parameter 'client_secret'",
  ],
  ["password parameter", "https://example.com/login?user=ann&password=hunter2!x", "credential parameter 'password'"],
  ["userinfo password", "https://ann:correct-horse@example.com/", "password in the URL's user-info part"],
  ["userinfo password on a private host", "http://admin:admin@10.0.0.1/", "password in the URL's user-info part"],
  ["percent-encoded key", `https://example.com/?q=${encodeAll(OPENAI)}`, "OpenAI API key"],
  ["double-encoded key", `https://example.com/?q=${encodeAll(OPENAI).replaceAll("%", "%25")}`, "OpenAI API key"],
  ["percent-encoded parameter name", `https://example.com/?api%5Fkey=${alnum(20)}`, "credential parameter 'api_key'"],
  [
    "token in a double-encoded nested URL",
    `https://proxy.example.com/?u=https%253A%252F%252Fapi.example.com%252F%253Ftoken%253D${alnum(24)}`,
    "credential parameter 'token'",
  ],
  [
    "key split by a newline (stripped by URL parsers)",
    `https://example.com/?k=sk-${alnum(20)}\n${alnum(28, 3)}`,
    "OpenAI API key",
  ],
  ["upper-case TOKEN parameter", `https://example.com/?TOKEN=${alnum(24)}`, "credential parameter 'TOKEN'"],
  [
    "github_token parameter (suffix rule)",
    `https://example.com/?github_token=${alnum(24)}`,
    "credential parameter 'github_token'",
  ],
];

const ALLOWED = [
  "https://example.com/docs/api_key-rotation",
  "https://example.com/search?q=token",
  "https://example.com/?token=",
  "https://example.com/list?sort=password",
  "https://www.npmjs.com/package/sk-ui-components",
  "https://github.com/org/repo/blob/main/token.ts",
  "https://en.wikipedia.org/wiki/Access_token",
  "https://example.com/search?q=api_key+rotation",
  "https://example.com/?key=home",
  // `auth` naming a sign-in method is not a credential; nor is a short lower-case word under
  // `token` (issue 18: `token=ERC20`, `token=usdc`); `token=a1b2c3d4e5` is one (ISSUE_8_REFUSED).
  "https://example.com/?auth=google&token=",
  "https://example.com/?auth=google&token=abc",
  "https://example.com/items/3f1c9a2e-7b4d-4e8f-9a6b-2c5d8e1f0a37",
  "https://example.com/videos?pageToken=CAoQAAabcdEF12345678",
  "https://example.com/fc-barcelona-vs-real-madrid-highlights-2024",
  "https://example.com/desk-organizer-with-drawers-2024-model",
  "https://huggingface.co/docs/hub/security-tokens",
  "https://docs.stripe.com/keys#test-live-modes",
  "https://example.com/?signature=none&password=",
  "https://example.com/@user/how-to-rotate-sk-keys",
  "https://example.com:8443/path?a=1&b=2#section-3",
  "https://example.com/%E0%A4%A?broken=%zz", // malformed escapes are tolerated
];

/** Issue 8: credential names are secrets whatever the value; more vendor shapes; decoding to a fixpoint. */
const ISSUE_8_REFUSED: Array<[label: string, url: string, kind: string]> = [
  ["a short plain password", "https://example.com/login?password=hunter2", "credential parameter 'password'"],
  [
    "a long one-word password",
    "https://example.com/login?password=correcthorsebatterystaple",
    "credential parameter 'password'",
  ],
  ["a short token", "https://example.com/?token=a1b2c3d4e5", "credential parameter 'token'"],
  ["a short access token", "https://example.com/?access_token=abc123", "credential parameter 'access_token'"],
  ["base64 user:pass in auth", "https://example.com/?auth=dXNlcjpwYXNz", "credential parameter 'auth'"],
  [
    "an AWS secret access key",
    `https://example.com/?aws_secret_access_key=${alnum(40)}`,
    "credential parameter 'aws_secret_access_key'",
  ],
  ["pwd and pass", "https://example.com/?user=a&pwd=letmein", "credential parameter 'pwd'"],
  ["GitLab personal token", `https://example.com/x?glpat-${alnum(20)}`, "GitLab token"],
  ["GitLab deploy token", `https://example.com/gldt-${alnum(20, 3)}`, "GitLab token"],
  ["GitLab pipeline trigger token", `https://example.com/t/glptt-${hex(40)}`, "GitLab pipeline trigger token"],
  ["Stripe webhook secret", `https://example.com/?x=whsec_${alnum(32)}`, "Stripe webhook secret"],
  ["Google OAuth client secret", `https://example.com/?cs=GOCSPX-${alnum(28)}`, "Google OAuth client secret"],
  [
    "Telegram bot token in the path",
    `https://api.telegram.org/bot123456789:AA${alnum(33)}/getMe`,
    "Telegram bot token",
  ],
  ["Discord webhook", `https://discord.com/api/webhooks/123456789012345678/${alnum(68)}`, "Discord webhook URL"],
  ["Slack webhook", `https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/${alnum(24)}`, "Slack webhook URL"],
  ["PyPI token", `https://example.com/?p=pypi-AgEIcHlwaS5vcmc${alnum(60)}`, "PyPI token"],
  ["Shopify token", `https://example.com/shpat_${hex(32)}`, "Shopify token"],
  ["DigitalOcean token", `https://example.com/?t2=dop_v1_${hex(64)}`, "DigitalOcean token"],
  [
    "Azure connection string",
    `https://example.com/?c=DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${alnum(86)}==`,
    "Azure storage account key",
  ],
  [
    "a key encoded five times",
    `https://example.com/?q=${encodeAll(OPENAI).replaceAll("%", "%25252525")}`,
    "OpenAI API key",
  ],
];

const ISSUE_8_ALLOWED = [
  "https://example.com/items?pagination_token=eyJvZmZzZXQiOjEwMH0abc123XYZ",
  "https://example.com/items?page_token=CAoQAAabcdEF12345678&next_token=Zm9vYmFyMTIzNDU2Nzg5",
  "https://example.com/items?pageToken=Q0FvUUFBYWJjZEVGMTIzNDU2&cursor=abc123def456ghi789",
  "https://shop.example.com/product?key=SKU2024BLUE42XL",
  "https://api.example.com/v1?api_key=YOUR_API_KEY",
  "https://api.nasa.example/planetary/apod?api_key=DEMO_KEY",
  "https://example.com/?token=%3Ctoken%3E&secret=xxxxxxxx&password=***",
];

describe("secret detection (issue 8)", () => {
  it.each(ISSUE_8_REFUSED)("refuses %s", (_label, url, kind) => {
    expect(findSecretInUrl(url)).toEqual({ kind });
  });

  it.each(ISSUE_8_ALLOWED)("allows %s", (url) => {
    expect(findSecretInUrl(url)).toBeNull();
  });
});

describe("secret detection", () => {
  it("has at least 20 refused and 8 allowed URLs", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(20);
    expect(ALLOWED.length).toBeGreaterThanOrEqual(8);
  });

  it.each(REFUSED)("refuses %s", (_label, url, kind) => {
    expect(findSecretInUrl(url)).toEqual({ kind });
  });

  it.each(ALLOWED)("allows %s", (url) => {
    expect(findSecretInUrl(url)).toBeNull();
  });

  it("never puts the secret or the URL in the finding or in the 422 message", () => {
    for (const [, url] of REFUSED) {
      const finding = findSecretInUrl(url);
      expect(finding).not.toBeNull();
      let error: unknown;
      try {
        assertNoSecretInUrls(["https://example.org/fine", url]);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AppError);
      const appError = error as AppError;
      expect(appError.status).toBe(422);
      expect(appError.code).toBe("secret_in_url");
      expect(appError.details).toEqual({ index: 1, kind: finding?.kind });
      const rendered = JSON.stringify(appError.toBody());
      for (const part of [OPENAI, alnum(20), alnum(24), hex(32), "hunter2", "correct-horse", "example.com/"]) {
        expect(rendered).not.toContain(part);
      }
    }
  });

  it("passes a whole call of ordinary URLs", () => {
    expect(() => assertNoSecretInUrls(ALLOWED)).not.toThrow();
  });
});
