import type { IncomingMessage } from 'node:http';

/** What the pipeline knows about one request, from its first step to its record. */
export interface RequestState {
  /** The client's `X-Request-Id` when it is a sane one, else a fresh UUID; echoed on the response. */
  readonly requestId: string;
  /** When the request reached the app, for its duration (process.hrtime.bigint). */
  readonly started: bigint;
  /** The operationId the dispatcher matched, or the name of the infrastructure endpoint that answered. */
  handledBy: string | undefined;
  /** The version of the API whose dispatcher answered, if one did. */
  apiVersion: string | undefined;
}

// A symbol-keyed slot on the request rather than a WeakMap: one property write per request, where a
// WeakMap entry per request costs measurably more (an ephemeron for the collector to trace).
const STATE: unique symbol = Symbol('petstore.requestState');

declare module 'http' {
  interface IncomingMessage {
    /** The pipeline's state of this request (request-state.ts). */
    [STATE]?: RequestState;
  }
}

/** Starts the state of a request; the pipeline's first step calls it. */
export function startRequestState(req: IncomingMessage, requestId: string): RequestState {
  const state: RequestState = { requestId, started: process.hrtime.bigint(), handledBy: undefined, apiVersion: undefined };
  req[STATE] = state;
  return state;
}

/** The state of a request the pipeline has started. */
export function requestState(req: IncomingMessage): RequestState {
  const state = req[STATE];
  if (state === undefined) throw new Error('the request did not go through the pipeline');
  return state;
}

/** Marks the request as answered by an infrastructure endpoint, for its log line and metrics. */
export function answeredBy(req: IncomingMessage, endpoint: string): void {
  requestState(req).handledBy = endpoint;
}
