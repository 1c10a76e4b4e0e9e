import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliCompress, type Gzip } from "node:zlib";

// Response compression for answers the client accepts compressed (RFC 9110 Accept-Encoding with
// q-values): Brotli first, then gzip. Small answers go as they are (the headers would outweigh
// the saving). Brotli runs at a low quality level: dynamic answers are compressed once per
// request, and levels above ~5 cost several times the CPU for a few percent of bytes
// (bench/compression.ts prints the figures).

export type ContentEncoding = "br" | "gzip";

export interface CompressionSettings {
  /** Answers smaller than this many bytes are sent uncompressed; 0 turns compression off. */
  minBytes: number;
  /** Brotli quality, 0–11. */
  brotliQuality: number;
  /** gzip level, 1–9. */
  gzipLevel: number;
}

export const DEFAULT_COMPRESSION: CompressionSettings = { minBytes: 1024, brotliQuality: 4, gzipLevel: 6 };

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** The encoding to answer with, from an Accept-Encoding header; undefined: identity. */
export function negotiateEncoding(acceptEncoding: string | undefined): ContentEncoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name, ...parameters] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    // A malformed weight (`q=x`) counts as "not acceptable" rather than as the default 1.
    const q = parameters.map((p) => /^\s*q\s*=\s*(.*?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const weight = q === undefined ? 1 : /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q) ? Number(q) : 0;
    weights.set(name.trim(), weight);
  }
  const weightOf = (encoding: ContentEncoding) => weights.get(encoding) ?? weights.get("*") ?? 0;
  const [best] = (["br", "gzip"] as const).filter((encoding) => weightOf(encoding) > 0).sort((a, b) => weightOf(b) - weightOf(a));
  return best;
}

/**
 * The encoding `body` goes out in for this request (compressFor's choice), or undefined: identity
 * (compression off, a small answer, or nothing acceptable).
 */
export function encodingFor(req: Pick<IncomingMessage, "headers">, body: string | Buffer, settings: CompressionSettings): ContentEncoding | undefined {
  if (settings.minBytes <= 0) return undefined;
  const encoding = negotiateEncoding(req.headers["accept-encoding"]);
  if (!encoding) return undefined;
  // Counting a string's UTF-8 bytes reads all of it (a 112 KB answer: a tenth of a millisecond,
  // on every answer of a client that compresses nothing, before this asked the header first). It
  // has at least as many bytes as UTF-16 units, so a long string needs no counting.
  const atLeast = typeof body === "string" && body.length >= settings.minBytes ? body.length : Buffer.byteLength(body);
  return atLeast < settings.minBytes ? undefined : encoding;
}

/** `body` compressed in `encoding` with the configured quality. */
export async function compress(body: string | Buffer, encoding: ContentEncoding, settings: CompressionSettings): Promise<Buffer> {
  return encoding === "br"
    ? await brotli(body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body),
        },
      })
    : await gzipAsync(body, { level: settings.gzipLevel });
}

/**
 * A compressing stream for an answer of unknown length (the CSV export), with the settings and
 * negotiation of encodingFor, or undefined to send it as it is (compression off, or not accepted).
 * The caller sets `Content-Encoding` to `encoding` and `Vary: Accept-Encoding` either way.
 */
export function compressionStreamFor(
  req: IncomingMessage,
  settings: CompressionSettings | undefined,
): { encoding: ContentEncoding; stream: BrotliCompress | Gzip } | undefined {
  if (!settings || settings.minBytes <= 0) return undefined;
  const encoding = negotiateEncoding(req.headers["accept-encoding"]);
  if (!encoding) return undefined;
  const stream =
    encoding === "br"
      ? createBrotliCompress({
          params: { [constants.BROTLI_PARAM_QUALITY]: settings.brotliQuality, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
        })
      : createGzip({ level: settings.gzipLevel });
  return { encoding, stream };
}
