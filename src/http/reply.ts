import type { ServerResponse } from 'node:http';
import type { OperationId, operations } from '../contract/types';
import type { ApiError } from '../errors';
import type { ChunkSource } from './stream';

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
type Responses<K extends OperationId> = operations[K]['responses'];
type SuccessStatus<K extends OperationId> = keyof Responses<K> & (200 | 201 | 202 | 204 | 304);

/** The headers response R declares, without the generated index signature; optional ones stay optional. */
type Declared<R> = R extends { headers: infer H } ? { [N in keyof H as string extends N ? never : N]: H[N] } : object;

/**
 * The declared headers a handler sets: a deprecated operation's `Deprecation`, `Sunset` and `Link`
 * come from the document (src/contract/deprecation.ts), added to every reply by the pipeline.
 */
type DeclaredHeaders<R> = Declared<R> extends { Deprecation: unknown } ? Omit<Declared<R>, 'Deprecation' | 'Sunset' | 'Link'> : Declared<R>;

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

/** The non-error replies the spec declares for operation K, with their body and header types. Errors are thrown. */
export type SuccessReply<K extends OperationId> = {
  [S in SuccessStatus<K>]: (JsonOf<Responses<K>[S]> extends undefined
    ? { status: S; body?: undefined }
    : WithBody<S, JsonOf<Responses<K>[S]>>) &
    HeadersOf<Responses<K>[S]>;
}[SuccessStatus<K>];

/** The reply that renders an ApiError: the spec's Error body, its status, and its headers. */
export function errorReply(error: ApiError): Reply {
  return { status: error.status, body: error.toBody(), headers: { ...error.headers }, error };
}

/**
 * Writes a checked reply: JSON bodies as exactly `application/json`, with a Content-Length.
 * The body goes to `end` as a string, so Node sends it in one write with the head.
 */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string | number> = { ...reply.headers };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  const payload = JSON.stringify(reply.body);
  headers['Content-Type'] = 'application/json';
  headers['Content-Length'] = Buffer.byteLength(payload, 'utf8');
  res.writeHead(reply.status, headers);
  res.end(payload, 'utf8');
}
