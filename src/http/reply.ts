import type { ServerResponse } from 'node:http';
import type { OperationId, operations } from '../contract/types';

/** A response as handlers describe it, before it is checked against the spec and sent. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
type Responses<K extends OperationId> = operations[K]['responses'];
type SuccessStatus<K extends OperationId> = keyof Responses<K> & (200 | 201 | 202 | 204);

/** The 2xx replies the spec declares for operation K, with their body types. Errors are thrown. */
export type SuccessReply<K extends OperationId> = {
  [S in SuccessStatus<K>]: JsonOf<Responses<K>[S]> extends undefined
    ? { status: S; body?: undefined; headers?: Record<string, string> }
    : { status: S; body: JsonOf<Responses<K>[S]>; headers?: Record<string, string> };
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
