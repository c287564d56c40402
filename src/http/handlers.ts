import type { Operation } from 'openapi-backend';
import type { OperationId, operations } from '../contract/types';
import type { Store } from '../store';
import { mockHandler } from './mock';
import type { SuccessReply } from './reply';

/** Operation K's parameters in one location, typed by the generated types; none is an empty object. */
type ParametersIn<K extends OperationId, In extends 'path' | 'query' | 'header'> = [NonNullable<operations[K]['parameters'][In]>] extends [
  never,
]
  ? Readonly<Record<never, never>>
  : Readonly<NonNullable<operations[K]['parameters'][In]>>;

/** Operation K's JSON request body, typed by the generated types; undefined when it declares none. */
type RequestBodyOf<K extends OperationId> = operations[K]['requestBody'] extends { content: { 'application/json': infer B } }
  ? B
  : undefined;

/**
 * What the handler of operation K gets: its inputs typed from the generated `operations[K]`,
 * validated and converted (an int64 id is a safe-integer number, a boolean a boolean), never
 * express's req or res, and never a string to parse.
 */
export interface HandlerContext<K extends OperationId> {
  readonly path: ParametersIn<K, 'path'>;
  readonly query: ParametersIn<K, 'query'>;
  /** The headers the operation declares, by the names the document gives them. */
  readonly headers: ParametersIn<K, 'header'>;
  /** The request body, parsed and validated against the operation's schema. */
  readonly body: RequestBodyOf<K>;
  /** The name of the API key that authenticated the request. */
  readonly keyName: string;
}

/** A handler for operation K: returns one of its declared 2xx replies, or throws an ApiError. */
export type OperationHandler<K extends OperationId> = (context: HandlerContext<K>) => Promise<SuccessReply<K>>;

/** One handler per operation in the spec; a spec operation without one fails the typecheck. */
export type OperationHandlers = { readonly [K in OperationId]: OperationHandler<K> };

/** What a handler module builds its handler from. */
export interface HandlerDeps<K extends OperationId> {
  readonly store: Store;
  /** Orders per chunk of a streamed list. */
  readonly listChunkItems: number;
  /**
   * A handler that answers operation K with a mock built from the document (its example, else a
   * value generated from its schema) marked `X-Mock: true`: what a scaffolded module returns until
   * someone writes the real handler.
   */
  readonly mock: OperationHandler<K>;
}

/** How a handler module exports its handler: the operation it serves, and how to build it. */
export interface HandlerDefinition<K extends OperationId> {
  readonly operationId: K;
  readonly create: (deps: HandlerDeps<K>) => OperationHandler<K>;
}

/** One handler module per operation in the spec; a spec operation without one fails the typecheck. */
export type HandlerDefinitions = { readonly [K in OperationId]: HandlerDefinition<K> };

/** Declares the handler of operation K, typed from the generated `operations[K]`. */
export function defineHandler<K extends OperationId>(
  operationId: K,
  create: (deps: HandlerDeps<K>) => OperationHandler<K>,
): HandlerDefinition<K> {
  return { operationId, create };
}

/** The handlers an app serves, and the operations among them that answer mocks. */
export interface BoundHandlers {
  readonly handlers: ReadonlyMap<string, OperationHandler<OperationId>>;
  readonly mocked: readonly string[];
}

/**
 * Builds the handler of every operation in the document: the test's override when there is one,
 * else its module's. Throws, naming them, when operations have neither, so that the server never
 * starts with an operation that would answer 501.
 */
export function bindHandlers(
  operations: readonly Operation[],
  definitions: Partial<HandlerDefinitions>,
  overrides: Partial<OperationHandlers>,
  deps: Omit<HandlerDeps<OperationId>, 'mock'>,
): BoundHandlers {
  const handlers = new Map<string, OperationHandler<OperationId>>();
  const mocked: string[] = [];
  const missing: string[] = [];
  for (const operation of operations) {
    const operationId = operation.operationId as OperationId;
    // Every operation meets here, so its handler is seen with the union of all contexts.
    const override = overrides[operationId] as OperationHandler<OperationId> | undefined;
    const definition = definitions[operationId] as HandlerDefinition<OperationId> | undefined;
    if (override !== undefined) handlers.set(operationId, override);
    else if (definition !== undefined) {
      handlers.set(
        operationId,
        definition.create({
          ...deps,
          get mock() {
            mocked.push(operationId);
            return mockHandler(operation);
          },
        }),
      );
    } else missing.push(operationId);
  }
  if (missing.length > 0) throw new Error(`the spec has operations with no handler: ${missing.join(', ')}; run \`npm run scaffold\``);
  return { handlers, mocked };
}
