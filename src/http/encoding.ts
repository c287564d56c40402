import zlib from 'node:zlib';
import Negotiator from 'negotiator';

/** The content codings the server can produce, best first when the client likes them equally. */
const CODINGS = ['br', 'gzip', 'identity'] as const;
export type Coding = (typeof CODINGS)[number];

/** Bodies smaller than this are never compressed: the framing costs more than it saves. */
export const COMPRESS_MIN_BYTES = 8 * 1024;

/** The coding to answer with, negotiated from `Accept-Encoding` (RFC 9110 §12.5.3); identity when nothing better is acceptable. */
export function negotiateCoding(headers: Record<string, string | string[] | undefined>): Coding {
  if (headers['accept-encoding'] === undefined) return 'identity';
  const negotiator = new Negotiator({ headers }) as Negotiator & {
    encoding(available: readonly string[], options: { preferred: readonly string[] }): string | undefined;
  };
  return (negotiator.encoding(CODINGS, { preferred: CODINGS }) as Coding | undefined) ?? 'identity';
}

/** A streaming compressor for a coding, tuned for speed over the last few percent of size. */
export function createCompressor(coding: Exclude<Coding, 'identity'>): zlib.Gzip | zlib.BrotliCompress {
  return coding === 'br'
    ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })
    : zlib.createGzip({ level: 5 });
}
