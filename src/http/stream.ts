import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { COMPRESS_MIN_BYTES, createCompressor, negotiateCoding, type Coding } from './encoding';
import type { ItemWriter } from './item-writer';
import { sendReply, setCommonHeaders, type Reply } from './reply';

/** Items read in chunks from a snapshot that must be closed; the store's OrderSnapshot is one. */
export interface ChunkSource<T> {
  read(max: number): Promise<T[]>;
  /** Whether every item has been read, for a source that knows without reading on. */
  exhausted?(): boolean;
  close(): Promise<void>;
}

/** The same chunks, each item mapped: what a version of the API shows of the store's items. */
export function mapChunks<T, U>(source: ChunkSource<T>, map: (item: T) => U): ChunkSource<U> {
  return {
    read: async (max) => (await source.read(max)).map(map),
    ...(source.exhausted === undefined ? {} : { exhausted: source.exhausted.bind(source) }),
    close: () => source.close(),
  };
}

/** What happens to a streamed reply that fails. */
export interface StreamFailures {
  /** The reply sent for a failure before the first byte: a refused item's 500, or the Error the failure becomes. */
  beforeFirstByte(err: unknown): Reply;
  /** Told of a failure after the first byte; the connection is then cut, which tells the client the list is incomplete. */
  afterFirstByte(err: unknown): void;
}

/**
 * Sends a checked reply: in one write when its body is in hand; item by item when it is a stream
 * of a JSON array, each item checked and written by `writeItem`. A streamed reply settles when its
 * stream has; anything else is sent at once.
 */
export function sendChecked(
  res: ServerResponse,
  request: { readonly method: string; readonly headers: IncomingHttpHeaders },
  reply: Reply,
  stream: { readonly writeItem: ItemWriter | undefined; readonly chunkItems: number; readonly failures: () => StreamFailures },
): Promise<void> | void {
  if (reply.stream === undefined || stream.writeItem === undefined) return sendReply(res, reply);
  const failures = stream.failures();
  return sendJsonArray(res, reply.stream, {
    status: reply.status,
    headers: reply.headers ?? {},
    writeItem: stream.writeItem,
    chunkItems: stream.chunkItems,
    coding: negotiateCoding(request.headers),
    head: request.method === 'HEAD',
    onError: (err) => failures.afterFirstByte(err),
  }).catch((err: unknown) => sendReply(res, failures.beforeFirstByte(err)));
}

/** How to stream one JSON array. */
export interface ArrayStreamOptions<T> {
  status: number;
  headers: Record<string, string>;
  /** Checks one item and returns it as JSON; throws (an ItemViolation) for an item that may not be sent. */
  writeItem: (item: T) => string;
  /** Items per chunk: each chunk is read, serialized and written before the event loop gets a turn. */
  chunkItems: number;
  coding: Coding;
  /** A HEAD request gets the headers and no body. */
  head: boolean;
  /** Called when the stream fails after its first byte: the connection is then closed, not completed. */
  onError: (err: unknown) => void;
}

/**
 * Writes a JSON array from a chunked source, never holding more than one chunk: a list that fits
 * in one chunk goes out whole with a Content-Length; a longer one streams with backpressure,
 * yielding to the event loop between chunks, and stops reading when the client goes away. Every
 * item is checked before it is written. A failure after the first byte (a bad item included)
 * destroys the connection, so the client sees a truncated body, never a shorter valid array. A
 * failure before it is thrown, for the caller to answer with an Error.
 */
export async function sendJsonArray<T>(res: ServerResponse, source: ChunkSource<T>, options: ArrayStreamOptions<T>): Promise<void> {
  const { writeItem, chunkItems } = options;
  let gone = false;
  res.once('close', () => (gone = true));
  let out: Writable = res;
  let compressor: ReturnType<typeof createCompressor> | undefined;
  // Once the status and headers are set, a failure can no longer become an Error response, even
  // if a compressor still holds the first bytes: from then on it must close the connection.
  let committed = false;
  try {
    const first = await source.read(chunkItems);
    let text = first.map(writeItem).join(',');
    // A list of exactly one chunk is whole too when the source knows it has nothing more: it goes
    // out with a Content-Length in one write, not chunked over two turns of the event loop.
    const whole = first.length < chunkItems || source.exhausted?.() === true;
    const coding = whole && text.length + 2 < COMPRESS_MIN_BYTES ? 'identity' : options.coding;

    committed = true;
    res.statusCode = options.status;
    setCommonHeaders(res);
    for (const [name, value] of Object.entries(options.headers)) res.setHeader(name, value);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Vary', 'Accept-Encoding');
    if (options.head) {
      res.end();
      return;
    }
    if (whole && coding === 'identity') {
      const body = Buffer.from(`[${text}]`, 'utf8');
      res.setHeader('Content-Length', body.length);
      res.end(body);
      return;
    }
    if (coding !== 'identity') {
      res.setHeader('Content-Encoding', coding);
      compressor = createCompressor(coding);
      compressor.on('error', (err) => res.destroy(err));
      compressor.pipe(res);
      out = compressor;
    }

    let empty = first.length === 0;
    await write(out, res, `[${text}`);
    // Push the first chunk through the compressor now, so the first byte does not wait for its buffer.
    compressor?.flush();
    if (!whole) {
      for (;;) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (gone) break;
        const chunk = await source.read(chunkItems);
        if (gone || chunk.length === 0) break;
        text = chunk.map(writeItem).join(',');
        await write(out, res, empty ? text : `,${text}`);
        empty = false;
      }
    }
    if (gone) out.destroy();
    else out.end(']');
  } catch (err) {
    if (!committed) throw err;
    options.onError(err);
    if (out !== res) out.destroy();
    res.destroy();
  } finally {
    await source.close();
  }
}

/** Writes a piece, then waits for the buffer to drain (or the client to leave) before going on. */
function write(out: Writable, res: ServerResponse, text: string): Promise<void> {
  if (out.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      res.off('close', done);
      resolve();
    };
    out.once('drain', done);
    res.once('close', done);
  });
}
