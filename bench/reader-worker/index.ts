/**
 * Bench-only Worker: converts the POSTed HTML bytes the way the direct extractor does (charset
 * decode, then the reader) inside workerd and answers with the sizes (`?mode=decode`: the decode
 * alone). bench/extract.bench.ts bundles it (with the reader before or after) and serves it with
 * workerd under a capped V8 heap.
 */
import { decodeHtmlBody, htmlToMarkdown } from "../../shared/web/reader/html-to-markdown";

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("POST an HTML page", { status: 405 });
    const bytes = new Uint8Array(await request.arrayBuffer());
    const text = decodeHtmlBody(bytes, request.headers.get("content-type"));
    // `?mode=decode` stops after the charset decode: the share of memory that is the body and its text.
    if (new URL(request.url).searchParams.get("mode") === "decode")
      return Response.json({ inputBytes: bytes.length, textChars: text.length });
    const page = htmlToMarkdown(text, "https://bench.example/docs/");
    return Response.json({ inputBytes: bytes.length, markdownChars: page.markdown.length });
  },
};
