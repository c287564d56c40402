import type { ApiVersion, OperationIdOf, VersionOperations } from '../contract/types';
import type { MaybePromise } from '../maybe-promise';
import type { EventFeed } from '../feed/event-feed';
import type { ServiceOptions } from '../config';
import type { PlaceOutcome, Store } from '../store';
import type { SuccessReply } from './reply';

/** Operation K of version V, as generated. */
type OperationOf<V extends ApiVersion, K extends OperationIdOf<V>> = VersionOperations[V][K];

/** An operation's parameters in one location, typed by the generated types; none is an empty object. */
type ParametersIn<O, In extends 'path' | 'query' | 'header'> = O extends { parameters: infer P }
  ? In extends keyof P
    ? [NonNullable<P[In]>] extends [never]
      ? Readonly<Record<never, never>>
      : Readonly<NonNullable<P[In]>>
    : Readonly<Record<never, never>>
  : Readonly<Record<never, never>>;

/** An operation's JSON request body, typed by the generated types; undefined when it declares none. */
type RequestBodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : undefined;

/**
 * What the handler of operation K gets: its inputs typed from the generated `operations[K]`,
 * validated and converted (an int64 id is a safe-integer number, a boolean a boolean), never
 * express's req or res, and never a string to parse.
 */
export interface HandlerContext<V extends ApiVersion, K extends OperationIdOf<V>> {
  readonly path: ParametersIn<OperationOf<V, K>, 'path'>;
  /** The query parameters the operation declares; one that is absent has its schema's default, if it has one. */
  readonly query: ParametersIn<OperationOf<V, K>, 'query'>;
  /** The headers the operation declares, by the names the document gives them. */
  readonly headers: ParametersIn<OperationOf<V, K>, 'header'>;
  /** The request body, parsed and validated against the operation's schema. */
  readonly body: RequestBodyOf<OperationOf<V, K>>;
  /**
   * The name of the API key that authenticated the request; undefined when the operation's document
   * lets it be called without one (`security: []`, or an empty requirement) and none was given.
   */
  readonly keyName: string | undefined;
}

/**
 * A handler for operation K of version V: returns one of its declared 2xx replies, or throws an
 * ApiError. It may be async; one that has its answer in hand may return or throw it at once, so
 * that the request takes no turn of the microtask queue (cancelOrder's 404 on SQLite).
 */
export type OperationHandler<V extends ApiVersion, K extends OperationIdOf<V>> = (
  context: HandlerContext<V, K>,
) => MaybePromise<SuccessReply<V, K>>;

/** One handler per operation in version V's document; an operation without one fails the typecheck. */
export type OperationHandlers<V extends ApiVersion = 'v1'> = { readonly [K in OperationIdOf<V>]: OperationHandler<V, K> };

/** What a handler module builds its handler from. */
export interface HandlerDeps<V extends ApiVersion, K extends OperationIdOf<V>> {
  readonly store: Store;
  /** What the service does by the deployment's choice: the Idempotency-Key's hours, a list's chunk. */
  readonly service: ServiceOptions;
  /**
   * A handler that answers operation K with a mock built from the document (its example, else a
   * value generated from its schema) marked `X-Mock: true`: what a scaffolded module returns until
   * someone writes the real handler.
   */
  readonly mock: OperationHandler<V, K>;
  /** The store's secret for signing what the server hands out and takes back (a list's cursors). */
  readonly secret: Buffer;
  /** The change feed's waiting requests and retention. */
  readonly feed: EventFeed;
  /** Told what each placement came to (the metrics). */
  readonly onPlacement: (outcome: PlaceOutcome['outcome']) => void;
}

/** How a handler module exports its handler: the version and operation it serves, and how to build it. */
export interface HandlerDefinition<V extends ApiVersion, K extends OperationIdOf<V>> {
  readonly version: V;
  readonly operationId: K;
  readonly create: (deps: HandlerDeps<V, K>) => OperationHandler<V, K>;
}

/** One handler module per operation in version V's document; an operation without one fails the typecheck. */
export type HandlerDefinitions<V extends ApiVersion = 'v1'> = { readonly [K in OperationIdOf<V>]: HandlerDefinition<V, K> };

/** Declares the handler of operation K of version V, typed from the generated `operations[K]` of that version's document. */
export function defineHandler<V extends ApiVersion, K extends OperationIdOf<V>>(
  version: V,
  operationId: K,
  create: (deps: HandlerDeps<V, K>) => OperationHandler<V, K>,
): HandlerDefinition<V, K> {
  return { version, operationId, create };
}
