/**
 * The direct extractor's reader, before (the converter this branch replaced, read from git) and
 * after, side by side: quality on our own pages shaped like the kinds it meets (recall, precision,
 * chrome phrases kept, code blocks and table rows intact), CPU per page, peak memory per input
 * byte on big pages (Node child processes), and the smallest V8 heap under which a 16 MiB page
 * converts inside workerd.
 * Run: npm run bench -- extract
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bigReaderPage, READER_PAGES, scoreReader } from "../test/fixtures/reader-pages";
import { markdownToText } from "../shared/web/reader/html-to-markdown";
import { freePort } from "../scripts/local-stack";
import { median } from "./stats";

interface Reader {
  htmlToMarkdown: (html: string, url?: string) => { markdown: string };
}

const AFTER = resolve("shared/web/reader/html-to-markdown.ts");
const MiB = 2 ** 20;

/** The single-file converter as it was before it moved to shared/web/reader/, or null if git has no such history. */
function previousReaderPath(): string | null {
  const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" });
  const removal = git("rev-list", "-1", "HEAD", "--", "shared/web/html-to-markdown.ts").trim();
  if (!removal) return null;
  const dir = mkdtempSync(join(tmpdir(), "reader-before-"));
  for (const file of ["html-to-markdown.ts", "html-entities.ts"])
    writeFileSync(join(dir, file), git("show", `${removal}^:shared/web/${file}`));
  return join(dir, "html-to-markdown.ts");
}

const pct = (value: number) => `${(value * 100).toFixed(1)} %`;

async function quality(readers: Array<[string, Reader]>): Promise<boolean> {
  console.log("### Quality per page\n");
  console.log(
    "| page | reader | recall | precision | chrome phrases kept | code blocks intact | table rows | ms per page (median of 30) |",
  );
  console.log("|---|---|---:|---:|---|---:|---:|---:|");
  let floorHeld = true;
  // Warm both readers' JIT first, so the first page's timing is not a compile.
  for (let i = 0; i < 10; i++)
    for (const [, reader] of readers) for (const page of READER_PAGES) reader.htmlToMarkdown(page.html, page.url);
  for (const page of READER_PAGES) {
    for (const [label, reader] of readers) {
      const { markdown } = reader.htmlToMarkdown(page.html, page.url);
      const score = scoreReader(page, markdown, markdownToText);
      const times: number[] = [];
      for (let i = 0; i < 30; i++) {
        const started = performance.now();
        reader.htmlToMarkdown(page.html, page.url);
        times.push(performance.now() - started);
      }
      if (label === "after" && (score.recall < 0.95 || score.precision < 0.97)) floorHeld = false;
      const kept = score.chromeKept.length
        ? `${score.chromeKept.length}/${page.chrome.length}: ${score.chromeKept.join("; ")}`
        : `0/${page.chrome.length}`;
      console.log(
        `| ${page.name} | ${label} | ${pct(score.recall)} | ${pct(score.precision)} | ${kept} | ${score.codeIntact}/${page.code.length} | ${score.tableRows}/${page.tableRows} | ${median(times).toFixed(2)} |`,
      );
    }
  }
  return floorHeld;
}

interface MemoryRun {
  inputBytes: number;
  peakGrowthBytes: number;
  ms: number;
  markdownChars: number;
}

function runChild(flags: string[], args: string[]): MemoryRun | null {
  const child = spawnSync(process.execPath, [...flags, "--import", "tsx", "bench/extract-memory-child.ts", ...args], {
    encoding: "utf8",
    timeout: 300_000,
  });
  return child.status === 0 ? (JSON.parse(child.stdout.trim().split("\n").pop()!) as MemoryRun) : null;
}

/** The smallest V8 old-space cap (MB, to 2 MB) under which the child completes: an upper bound on its live heap. */
function smallestHeap(args: string[]): number {
  let [low, high] = [4, 1024];
  if (!runChild([`--max-old-space-size=${high}`, "--max-semi-space-size=1"], args)) return Number.POSITIVE_INFINITY;
  while (high - low > 2) {
    const mid = Math.round((low + high) / 2);
    if (runChild([`--max-old-space-size=${mid}`, "--max-semi-space-size=1"], args)) high = mid;
    else low = mid;
  }
  return high;
}

function memory(readers: Array<[string, string]>): void {
  console.log("\n### Peak memory per input byte (Node 20, fresh process per run)\n");
  console.log(
    "Live heap: the smallest V8 old-space cap, to 2 MB (1 MB semi-spaces), under which the conversion completes, minus the same for a run that builds the page and skips the conversion. Peak RSS growth: everything allocated, uncollected garbage included (an upper bound).\n",
  );
  console.log(
    "| page | input | reader | live heap MB | live bytes per input byte | peak RSS growth MB | RSS bytes per input byte | ms (one cold run) | markdown chars |",
  );
  console.log("|---|---:|---|---:|---:|---:|---:|---:|---:|");
  for (const [kind, mib] of [
    ["docs", 1],
    ["docs", 4],
    ["docs", 16],
    ["dense", 16],
  ] as const) {
    const baseline = smallestHeap([AFTER, kind, String(mib * MiB), "skip"]);
    for (const [label, path] of readers) {
      const args = [path, kind, String(mib * MiB)];
      const run = runChild(["--expose-gc"], args);
      if (!run) {
        console.log(`| ${kind} | ${mib} MiB | ${label} | failed | | | | | |`);
        continue;
      }
      const live = smallestHeap(args) - baseline;
      console.log(
        `| ${kind} | ${(run.inputBytes / MiB).toFixed(1)} MiB | ${label} | ${live} | ${((live * MiB) / run.inputBytes).toFixed(2)} | ${(run.peakGrowthBytes / MiB).toFixed(1)} | ${(run.peakGrowthBytes / run.inputBytes).toFixed(2)} | ${run.ms.toFixed(0)} | ${run.markdownChars} |`,
      );
    }
  }
}

const WORKERD = resolve("node_modules/wrangler/node_modules/@cloudflare/workerd-linux-64/bin/workerd");

/** Bundles bench/reader-worker with the given reader into a workerd config whose V8 old space is capped at `heapMB`. */
function workerdBundle(readerPath: string, dir: string): void {
  const entry = readFileSync("bench/reader-worker/index.ts", "utf8").replace(
    "../../shared/web/reader/html-to-markdown",
    readerPath,
  );
  writeFileSync(join(dir, "entry.ts"), entry);
  execFileSync(
    "npx",
    [
      "esbuild",
      join(dir, "entry.ts"),
      "--bundle",
      "--format=esm",
      "--platform=neutral",
      `--outfile=${join(dir, "index.js")}`,
    ],
    { stdio: "ignore" },
  );
}

function workerdConfig(dir: string, port: number, heapMB: number): string {
  const file = join(dir, `config-${heapMB}.capnp`);
  writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
  v8Flags = [ "--max-old-space-size=${heapMB}", "--max-semi-space-size=1" ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "index.js", esModule = embed "index.js") ],
  compatibilityDate = "2026-04-01",
);
`,
  );
  return file;
}

/** Whether workerd, its V8 old space capped at `heapMB`, converts the page (a V8 out-of-memory kills the process). */
async function convertsInWorkerd(
  dir: string,
  heapMB: number,
  body: Uint8Array<ArrayBuffer>,
  mode = "",
): Promise<{ ok: boolean; markdownChars?: number }> {
  const port = await freePort();
  const child = spawn(WORKERD, ["serve", workerdConfig(dir, port, heapMB)], { cwd: dir, stdio: "ignore" });
  try {
    for (let i = 0; i < 50; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/`)).status === 405) break;
      } catch {
        await new Promise((done) => setTimeout(done, 100));
      }
    }
    const response = await fetch(`http://127.0.0.1:${port}/${mode}`, {
      method: "POST",
      body: new Blob([body]),
      headers: { "content-type": "text/html; charset=utf-8" },
    });
    if (!response.ok) return { ok: false };
    return { ok: true, markdownChars: ((await response.json()) as { markdownChars?: number }).markdownChars };
  } catch {
    return { ok: false };
  } finally {
    child.kill("SIGKILL");
  }
}

async function inWorkerd(readers: Array<[string, string]>): Promise<void> {
  console.log("\n### 16 MiB pages inside workerd\n");
  console.log(
    "The bench Worker (bench/reader-worker: charset decode + reader, as the direct extractor runs them) bundled with esbuild and served by the workerd binary wrangler ships, its V8 old space capped with `v8Flags` (1 MB semi-spaces). The smallest cap, to 4 MB, under which the page converts bounds the isolate's JS heap; the 16 MiB request body is an ArrayBuffer outside it, and the decoded page text is counted again at 2 bytes per character in case workerd keeps it outside the capped space (the decode alone completes under a small cap, so it may), which makes the bound conservative.\n",
  );
  console.log(
    "| page | input | reader | smallest V8 heap cap that converts | the decode alone needs | + body (ArrayBuffer) | + page text at 2 bytes/char, in case it lives outside the heap | isolate bound | markdown chars |",
  );
  console.log("|---|---:|---|---:|---:|---:|---:|---:|---:|");
  for (const kind of ["docs", "dense"] as const) {
    const page = bigReaderPage(kind, 16 * MiB);
    const body = new TextEncoder().encode(page);
    const bodyMB = body.length / MiB;
    let decodeMB: number | null = null;
    for (const [label, path] of readers) {
      const dir = mkdtempSync(join(tmpdir(), "reader-workerd-"));
      workerdBundle(path, dir);
      decodeMB ??= (await smallestWorkerdHeap(dir, body, "?mode=decode")).heapMB;
      const { heapMB, markdownChars } = await smallestWorkerdHeap(dir, body);
      const cap = Number.isFinite(heapMB) ? `${heapMB} MB` : "> 1024 MB";
      const textMB = (2 * page.length) / MiB;
      console.log(
        `| ${kind} | ${bodyMB.toFixed(1)} MiB | ${label} | ${cap} | ${decodeMB} MB | ${bodyMB.toFixed(0)} MB | ${textMB.toFixed(0)} MB | ${(heapMB + bodyMB + textMB).toFixed(0)} MB | ${markdownChars ?? "-"} |`,
      );
    }
  }
}

async function smallestWorkerdHeap(
  dir: string,
  body: Uint8Array<ArrayBuffer>,
  mode = "",
): Promise<{ heapMB: number; markdownChars?: number }> {
  let [low, high] = [4, 1024];
  let best = await convertsInWorkerd(dir, high, body, mode);
  if (!best.ok) return { heapMB: Number.POSITIVE_INFINITY };
  while (high - low > 4) {
    const mid = Math.round((low + high) / 2);
    const run = await convertsInWorkerd(dir, mid, body, mode);
    if (run.ok) [high, best] = [mid, run];
    else low = mid;
  }
  return { heapMB: high, markdownChars: best.markdownChars };
}

async function main() {
  const beforePath = previousReaderPath();
  const readers: Array<[string, string]> = beforePath
    ? [
        ["before", beforePath],
        ["after", AFTER],
      ]
    : [["after", AFTER]];
  const loaded: Array<[string, Reader]> = [];
  for (const [label, path] of readers) loaded.push([label, (await import(path)) as Reader]);
  const floorHeld = await quality(loaded);
  memory(readers);
  await inWorkerd(readers);
  if (!floorHeld) {
    console.error("\nquality floor broken: recall < 95 % or precision < 97 % on a page");
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
