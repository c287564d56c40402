import type { IncomingMessage } from 'node:http';
import type { ApiVersion } from '../contract/types';
import type { Operation } from '../openapi';

/** The key that authenticated a request, as the authenticate step found it. */
export interface RequestKey {
  /** The key's name, as its operator gave it. */
  readonly name: string;
}

/**
 * What the pipeline knows about one request, from its first step to its log line. Each step adds
 * what it learned: the dispatcher its version and operation, the authenticate step the key.
 */
export interface RequestContext {
  /** The client's `X-Request-Id` when it is a sane one, else a fresh UUID; echoed on the response. */
  readonly id: string;
  /** When the request reached the app, for its duration (process.hrtime.bigint). */
  readonly started: bigint;
  /** The version of the API whose dispatcher answers it, once one does. */
  version: ApiVersion | undefined;
  /** The operation the dispatcher matched, if one did. */
  operation: Operation | undefined;
  /** The operationId it matched, or the name of the infrastructure endpoint that answered. */
  handledBy: string | undefined;
  /** The key that authenticated it, once one did. */
  key: RequestKey | undefined;
}

// A symbol-keyed slot on the request rather than a WeakMap: one property write per request, where a
// WeakMap entry per request costs the collector an ephemeron to trace.
const CONTEXT: unique symbol = Symbol('petstore.requestContext');

declare module 'http' {
  interface IncomingMessage {
    /** The pipeline's context of this request (request-context.ts). */
    [CONTEXT]?: RequestContext;
  }
}

/** Starts the context of a request; the pipeline's first step calls it. */
export function startRequestContext(req: IncomingMessage, id: string): RequestContext {
  const context: RequestContext = {
    id,
    started: process.hrtime.bigint(),
    version: undefined,
    operation: undefined,
    handledBy: undefined,
    key: undefined,
  };
  req[CONTEXT] = context;
  return context;
}

/** The context of a request the pipeline has started, for the express routes outside the contract. */
export function requestContext(req: IncomingMessage): RequestContext {
  const context = req[CONTEXT];
  if (context === undefined) throw new Error('the request did not go through the pipeline');
  return context;
}

/** Marks the request as answered by an infrastructure endpoint, for its log line and metrics; returns its context. */
export function answeredBy(req: IncomingMessage, endpoint: string): RequestContext {
  const context = requestContext(req);
  context.handledBy = endpoint;
  return context;
}
