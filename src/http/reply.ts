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
type Headers = Record<string, string>;

/** A reply with body B: the body itself or, for an array, a stream of its items. */
type WithBody<S, B> = B extends ReadonlyArray<infer Item>
  ? { status: S; body: B; headers?: Headers } | { status: S; stream: ChunkSource<Item>; headers?: Headers }
  : { status: S; body: B; headers?: Headers };

/** The non-error replies the spec declares for operation K, with their body types. Errors are thrown. */
export type SuccessReply<K extends OperationId> = {
  [S in SuccessStatus<K>]: JsonOf<Responses<K>[S]> extends undefined
    ? { status: S; body?: undefined; headers?: Headers }
    : WithBody<S, JsonOf<Responses<K>[S]>>;
}[SuccessStatus<K>];

/** Writes a checked reply: JSON bodies as exactly `application/json`, with a Content-Length. */
export function sendReply(res: ServerResponse, reply: Reply): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.body === undefined) {
    res.statusCode = reply.status;
    res.end();
    return;
  }
  const payload = Buffer.from(JSON.stringify(reply.body), 'utf8');
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', payload.length);
  res.statusCode = reply.status;
  res.end(payload);
}
