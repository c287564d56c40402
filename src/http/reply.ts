import type { ServerResponse } from 'node:http';
import type { ApiVersion, OperationIdOf, VersionOperations } from '../contract/types';
import type { ApiError } from '../errors';
import type { ChunkSource } from './chunk-source';

/** A response as handlers describe it, before it is checked against the spec and sent. */
export interface Reply {
  status: number;
  body?: unknown;
  /** For a JSON array body: its items, streamed from a snapshot instead of held in memory. */
  stream?: ChunkSource<unknown>;
  headers?: Record<string, string>;
  /** The ApiError this reply renders, when it is one. */
  error?: ApiError;
}

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
type Responses<V extends ApiVersion, K extends OperationIdOf<V>> = VersionOperations[V][K] extends { responses: infer R } ? R : never;
type SuccessStatus<V extends ApiVersion, K extends OperationIdOf<V>> = keyof Responses<V, K> & (200 | 201 | 202 | 204 | 304);

/** The headers response R declares, without the generated index signature; optional ones stay optional. */
type Declared<R> = R extends { headers: infer H } ? { [N in keyof H as string extends N ? never : N]: H[N] } : object;

/**
 * The headers the pipeline adds to a reply, never its handler: the rate-limit fields of a key with
 * policies (steps/authorize.ts) and the CORS origin of an allowed page (cors.ts).
 */
type PipelineHeaders = 'RateLimit' | 'RateLimit-Policy' | 'Access-Control-Allow-Origin';

/**
 * The declared headers a handler sets: the pipeline's own are left out, as are a deprecated
 * operation's `Deprecation`, `Sunset` and `Link`, which come from the document
 * (src/contract/deprecation.ts) and are added to every reply by the pipeline.
 */
type DeclaredHeaders<R> =
  Declared<R> extends { Deprecation: unknown }
    ? Omit<Declared<R>, PipelineHeaders | 'Deprecation' | 'Sunset' | 'Link'>
    : Omit<Declared<R>, PipelineHeaders>;

/**
 * A reply's `headers`: the response's declared headers, typed (a required one, such as the list's
 * `ETag`, must be there, or the handler does not compile), and any other header as a string.
 */
type HeadersOf<R> =
  object extends DeclaredHeaders<R>
    ? { headers?: DeclaredHeaders<R> & Record<string, string> }
    : { headers: DeclaredHeaders<R> & Record<string, string> };

/** A reply with body B: the body itself or, for an array, a stream of its items. */
type WithBody<S, B> =
  B extends ReadonlyArray<infer Item> ? { status: S; body: B } | { status: S; stream: ChunkSource<Item> } : { status: S; body: B };

/** The non-error replies version V's document declares for operation K, with their body and header types. Errors are thrown. */
export type SuccessReply<V extends ApiVersion, K extends OperationIdOf<V>> = {
  [S in SuccessStatus<V, K>]: (JsonOf<Responses<V, K>[S]> extends undefined
    ? { status: S; body?: undefined }
    : WithBody<S, JsonOf<Responses<V, K>[S]>>) &
    HeadersOf<Responses<V, K>[S]>;
}[SuccessStatus<V, K>];

/**
 * The headers every response carries besides its `X-Request-Id`, whatever answers it: no cache may
 * keep an order or a keyed answer.
 */
const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};
const COMMON_HEADER_ENTRIES = Object.entries(COMMON_HEADERS);

/**
 * Sets the headers every response of a request carries (its `X-Request-Id` and the common
 * headers) on a response that is not written by sendReply: an infrastructure endpoint's, or a
 * streamed list's. sendReply writes them with the rest of its head instead: a header set before
 * `writeHead` sends Node down its slower path for every header of the reply.
 */
export function setCommonHeaders(res: ServerResponse, requestId: string): void {
  res.setHeader('X-Request-Id', requestId);
  for (const [name, value] of COMMON_HEADER_ENTRIES) res.setHeader(name, value);
}

/**
 * Makes a reply that never varies (a 401, a miss's 404, a 405) ready to send to every request that
 * gets it: frozen through and through, so that nothing can change it once made (the deprecation
 * headers go on a copy), with its wire form made once beside it.
 */
export function fixed(reply: Reply): Reply {
  Object.freeze(reply.body);
  Object.freeze(reply.headers);
  const wire = serialize(Object.freeze(reply), undefined);
  Object.freeze(wire.headers);
  fixedWires.set(reply, Object.freeze(wire));
  return reply;
}

/** Whether `fixed` made this reply: then it is the same, unchanged, every time it is sent. */
export function isFixed(reply: Reply): boolean {
  return fixedWires.has(reply);
}

/** A reply's head and body as they go on the wire. */
interface Wire {
  readonly headers: Readonly<Record<string, string | number>>;
  readonly payload: string | undefined;
}

/** The wire form of every fixed reply, made with it. */
const fixedWires = new WeakMap<Reply, Wire>();

/**
 * A reply's head and body as they go on the wire: the common headers (and the request's id, when
 * given) first, then the reply's; JSON as exactly `application/json`, with a Content-Length.
 */
export function serialize(
  reply: Reply,
  requestId: string | undefined,
): { headers: Record<string, string | number>; payload: string | undefined } {
  const headers: Record<string, string | number> =
    requestId === undefined ? { ...COMMON_HEADERS, ...reply.headers } : { 'X-Request-Id': requestId, ...COMMON_HEADERS, ...reply.headers };
  if (reply.body === undefined) return { headers, payload: undefined };
  const payload = JSON.stringify(reply.body);
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = Buffer.byteLength(payload, 'utf8');
  return { headers, payload };
}

/**
 * Writes a checked reply to request `requestId` with the headers every response carries, in one
 * `writeHead`. The body goes to `end` as a string, so Node sends it in one write with the head; that
 * write leaves at the end of this turn of the event loop, with the turn's other replies.
 */
export function sendReply(res: ServerResponse, reply: Reply, requestId: string): void {
  const fixed = fixedWires.get(reply);
  const { headers, payload } = fixed
    ? { headers: { 'X-Request-Id': requestId, ...fixed.headers }, payload: fixed.payload }
    : serialize(reply, requestId);
  res.writeHead(reply.status, headers);
  endAtTurnEnd(res, payload);
}

/** The replies made in this turn of the event loop, with their payloads, in the order they were made. */
const ending: Array<{ readonly res: ServerResponse; readonly payload: string | undefined }> = [];

/**
 * Ends `res` with `payload` at the end of this turn of the event loop (its check phase), where the
 * replies of every request read in the turn are written one after another. Written as each is
 * made, every reply's write woke its client on its own, and on a host where waking another process
 * is dear (a VM) that cost more than the rest of a small request (docs/performance.md). The turn's
 * replies are made already when it ends, so none waits for more than the rest of its turn. (Corking
 * the connection would not hold them: Node's `end` uncorks it fully.)
 */
function endAtTurnEnd(res: ServerResponse, payload: string | undefined): void {
  if (ending.push({ res, payload }) === 1) setImmediate(endHeld);
}

/** Whether endResumedTogether has asked for the held replies to be written when the resumed requests have run. */
let resumedEnding = false;

/**
 * Writes the held replies once the requests resumed now, after a wait (the rate-limit count's
 * commit, admission's turn), have run as far as they go without waiting again; call it as each is
 * resumed. They are resumed in the check phase, where a reply held to the end of the turn would
 * leave only after the next poll for I/O, a turn late: for a client that sends its next request on
 * the answer, that turn was most of what a rate-limited read cost it. The write is a tick queued
 * from a microtask, so it runs once every continuation queued meanwhile has run (Node runs queued
 * ticks only when the microtask queue is empty), and their replies leave together, as a turn's do.
 * A resumed request that waits again (for I/O) is written at the end of its turn, as any other. A
 * request admission lets on as another's reply finishes may be resumed in the poll phase: then the
 * replies held so far leave a little before the turn's end, never later.
 */
export function endResumedTogether(): void {
  if (resumedEnding) return;
  resumedEnding = true;
  queueMicrotask(() =>
    process.nextTick(() => {
      resumedEnding = false;
      endHeld();
    }),
  );
}

function endHeld(): void {
  for (const { res, payload } of ending.splice(0)) {
    if (res.writableEnded) continue;
    if (payload === undefined) res.end();
    else res.end(payload, 'utf8');
  }
}
