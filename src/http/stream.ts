import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { COMPRESS_MIN_BYTES, createCompressor, negotiateCoding, type Coding } from './encoding';
import type { Logger } from '../logger';
import type { ErrorReplies } from './error-reply';
import { ItemViolation } from './item-writer';
import type { ReplyCheck } from './reply-check';
import { sendReply, setCommonHeaders, type Reply } from './reply';
import type { RequestContext } from './request-context';
import type { ChunkSource } from './chunk-source';

/** What writing a checked reply needs. */
export interface WriterOptions {
  readonly replies: ReplyCheck;
  readonly errors: ErrorReplies;
  readonly logger: Logger;
  /** Items per chunk of a streamed array. */
  readonly chunkItems: number;
  /** Resolves when a streamed array may write its next chunk: in a later turn of the event loop (Admission.laterTurn). */
  readonly laterTurn: () => Promise<void>;
}

/** The request a checked reply answers, as the writer needs it. */
export interface WrittenRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly context: RequestContext;
}

/** Writes a checked reply to the request it answers. */
export type Writer = (request: WrittenRequest, res: ServerResponse, reply: Reply) => Promise<void> | void;

/**
 * The write step: a reply whose body is in hand goes out at once, in one write; a stream of a JSON
 * array goes out item by item, each checked and written by its status's item writer, and settles
 * when the stream has. A streamed reply that fails before its first byte is answered with the 500
 * (a refused item) or the Error the failure becomes; one that fails after it is logged and its
 * connection cut, which tells the client the list is incomplete.
 */
export function createWriter({ replies, errors, logger, chunkItems, laterTurn }: WriterOptions): Writer {
  return ({ method, headers, context }, res, reply) => {
    if (reply.stream === undefined) return sendReply(res, reply, context.id);
    const { operation } = context;
    const writeItems = replies.itemWriter(operation, reply.status);
    if (writeItems === undefined)
      throw new Error(`status ${reply.status} of ${operation?.operationId ?? 'none'} is not a JSON array that can be streamed`);
    return sendJsonArray(res, reply.stream, {
      status: reply.status,
      headers: reply.headers ?? {},
      requestId: context.id,
      writeItems,
      chunkItems,
      laterTurn,
      coding: negotiateCoding(headers),
      head: method === 'HEAD',
      onError: (err) => {
        if (err instanceof ItemViolation)
          replies.refused(context, { status: reply.status, problem: err.problem, outcome: 'connection closed', item: err.item });
        else
          logger.error({ err, requestId: context.id, operationId: operation?.operationId ?? 'none' }, 'stream failed; connection closed');
      },
    }).catch((err: unknown) => {
      if (!(err instanceof ItemViolation))
        return sendReply(res, replies.withDeprecation(errors.thrown(err, context), operation), context.id);
      replies.refused(context, { status: reply.status, problem: err.problem, outcome: 'sending 500 instead', item: err.item });
      return sendReply(res, replies.internal(operation), context.id);
    });
  };
}

/** How to stream one JSON array. */
export interface ArrayStreamOptions<T> {
  status: number;
  headers: Record<string, string>;
  /** The request's id, echoed in `X-Request-Id`. */
  requestId: string;
  /**
   * Checks a run of items and returns them as JSON, joined by commas, between `before` and `after`;
   * throws (an ItemViolation) for an item that may not be sent.
   */
  writeItems: (items: readonly T[], before: string, after: string) => string;
  /** Items per chunk: each chunk is read, serialized and written before the event loop gets a turn. */
  chunkItems: number;
  /** Resolves when the next chunk may be written, in a later turn of the event loop. */
  laterTurn: () => Promise<void>;
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
  const { writeItems, chunkItems, laterTurn } = options;
  let gone = false;
  res.once('close', () => (gone = true));
  let out: Writable = res;
  let compressor: ReturnType<typeof createCompressor> | undefined;
  // Once the status and headers are set, a failure can no longer become an Error response, even
  // if a compressor still holds the first bytes: from then on it must close the connection.
  let committed = false;
  try {
    const first = await source.read(chunkItems);
    // A list of exactly one chunk is whole too when the source knows it has nothing more: it goes
    // out with a Content-Length in one write, not chunked over two turns of the event loop.
    const whole = first.length < chunkItems || source.exhausted?.() === true;
    const text = writeItems(first, '[', whole ? ']' : '');
    const coding = whole && text.length < COMPRESS_MIN_BYTES ? 'identity' : options.coding;

    committed = true;
    res.statusCode = options.status;
    setCommonHeaders(res, options.requestId);
    for (const [name, value] of Object.entries(options.headers)) res.setHeader(name, value);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Vary', 'Accept-Encoding');
    if (options.head) {
      res.end();
      return;
    }
    if (whole && coding === 'identity') {
      // Handed to the socket as the string it is: Node encodes it straight into the write, where a
      // Buffer made first would copy the whole body once more. A body of ASCII alone (as many
      // bytes as characters) is the same bytes in Latin-1, which is copied rather than encoded.
      const bytes = Buffer.byteLength(text, 'utf8');
      res.setHeader('Content-Length', bytes);
      res.end(text, bytes === text.length ? 'latin1' : 'utf8');
      return;
    }
    if (coding !== 'identity') {
      res.setHeader('Content-Encoding', coding);
      compressor = createCompressor(coding);
      compressor.on('error', (err) => res.destroy(err));
      compressor.pipe(res);
      out = compressor;
    }

    if (whole) {
      // Compressed, so its length is not known yet.
      out.end(text);
      return;
    }
    let empty = first.length === 0;
    await write(out, res, text);
    // Push the first chunk through the compressor now, so the first byte does not wait for its buffer.
    compressor?.flush();
    for (;;) {
      await laterTurn();
      if (gone) break;
      const chunk = await source.read(chunkItems);
      if (gone || chunk.length === 0) break;
      // The last chunk, when the source knows it is, ends the array in the same write.
      const last = source.exhausted?.() === true;
      const text = writeItems(chunk, empty ? '' : ',', last ? ']' : '');
      if (last) {
        out.end(text);
        return;
      }
      await write(out, res, text);
      empty = false;
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
