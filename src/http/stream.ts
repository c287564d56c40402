import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { COMPRESS_MIN_BYTES, createCompressor, negotiateCoding, type Coding } from './encoding';
import type { Logger } from '../logger';
import type { Operation } from '../openapi';
import type { ErrorReplies } from './error-reply';
import { ItemViolation } from './item-writer';
import type { ReplyCheck } from './reply-check';
import { sendReply, setCommonHeaders, type Reply } from './reply';
import type { RequestState } from './request-state';

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

/** What sending a checked reply needs. */
export interface SenderOptions {
  readonly replies: ReplyCheck;
  readonly errors: ErrorReplies;
  readonly logger: Logger;
  /** Items per chunk of a streamed array. */
  readonly chunkItems: number;
}

/** Sends a checked reply to a request, for `operation` (undefined for a miss). */
export type Sender = (
  res: ServerResponse,
  request: { readonly method: string; readonly headers: IncomingHttpHeaders; readonly state: RequestState },
  operation: Operation | undefined,
  reply: Reply,
) => Promise<void> | void;

/**
 * The send step: a reply whose body is in hand goes out at once, in one write; a stream of a JSON
 * array goes out item by item, each checked and written by its status's item writer, and settles
 * when the stream has. A streamed reply that fails before its first byte is answered with the 500
 * (a refused item) or the Error the failure becomes; one that fails after it is logged and its
 * connection cut, which tells the client the list is incomplete.
 */
export function createSender({ replies, errors, logger, chunkItems }: SenderOptions): Sender {
  return (res, request, operation, reply) => {
    if (reply.stream === undefined) return sendReply(res, reply);
    const { requestId } = request.state;
    const operationId = operation?.operationId ?? 'none';
    const writeItem = replies.itemWriter(operation, reply.status);
    if (writeItem === undefined) throw new Error(`status ${reply.status} of ${operationId} is not a JSON array that can be streamed`);
    return sendJsonArray(res, reply.stream, {
      status: reply.status,
      headers: reply.headers ?? {},
      writeItem,
      chunkItems,
      coding: negotiateCoding(request.headers),
      head: request.method === 'HEAD',
      onError: (err) => {
        if (err instanceof ItemViolation) replies.refused(operationId, reply.status, err.problem, 'connection closed', requestId, err.item);
        else logger.error({ err, requestId, operationId }, 'stream failed; connection closed');
      },
    }).catch((err: unknown) => {
      if (!(err instanceof ItemViolation))
        return sendReply(res, replies.withDeprecation(errors.thrown(err, operation, requestId), operation));
      replies.refused(operationId, reply.status, err.problem, 'sending 500 instead', requestId, err.item);
      return sendReply(res, replies.internal(operation));
    });
  };
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
