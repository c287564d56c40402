import type { ApiVersion, OperationIdOf } from '../contract/types';
import type { MaybePromise } from '../maybe-promise';
import type { Operation } from '../openapi';
import type { HandlerContext, HandlerDefinitions, HandlerDeps, OperationHandlers } from './define-handler';
import { mockHandler } from './mock';
import type { Reply } from './reply';
import type { RequestInputs } from './request-check';

/** An operation's handler, bound: the request's inputs in, the handler's reply out. */
export type BoundHandler = (inputs: RequestInputs) => MaybePromise<Reply>;

/** The handlers a version serves, by operationId, and the operations among them that answer mocks. */
export interface BoundHandlers {
  readonly handlers: ReadonlyMap<string, BoundHandler>;
  readonly mocked: readonly string[];
}

/**
 * Builds the handler of every operation in version V's document: the test's override when there
 * is one, else its module's. Throws, naming them, when operations have neither, so that the
 * server never starts with an operation that could not answer.
 */
export function bindHandlers<V extends ApiVersion>(
  operations: readonly Operation[],
  definitions: Partial<HandlerDefinitions<V>>,
  overrides: Partial<OperationHandlers<V>>,
  deps: Omit<HandlerDeps<V, OperationIdOf<V>>, 'mock'>,
): BoundHandlers {
  const handlers = new Map<string, BoundHandler>();
  const mocked: string[] = [];
  const missing: string[] = [];
  const bind = <K extends OperationIdOf<V>>(operationId: K, operation: Operation): BoundHandler | undefined => {
    const handler =
      overrides[operationId] ??
      definitions[operationId]?.create({
        ...deps,
        get mock() {
          mocked.push(operationId);
          return mockHandler<V, K>(operation);
        },
      });
    return handler && ((inputs) => handler(contextOf<V, K>(inputs)));
  };
  for (const operation of operations) {
    const { operationId } = operation;
    const bound = isOperationOf(operationId, definitions, overrides) ? bind(operationId, operation) : undefined;
    if (bound === undefined) missing.push(operationId);
    else handlers.set(operationId, bound);
  }
  if (missing.length > 0) throw new Error(`the spec has operations with no handler: ${missing.join(', ')}; run \`npm run scaffold\``);
  return { handlers, mocked };
}

/** Whether version V has a handler module or an override for this operationId. */
function isOperationOf<V extends ApiVersion>(
  operationId: string,
  definitions: Partial<HandlerDefinitions<V>>,
  overrides: Partial<OperationHandlers<V>>,
): operationId is OperationIdOf<V> {
  return Object.hasOwn(definitions, operationId) || Object.hasOwn(overrides, operationId);
}

/**
 * A handler's context from the inputs the request check read. The check validated them against the
 * operation in the document, and the reader converted each by its schema; the generated types of
 * `operations[K]` come from the same document, so these are the values those types describe.
 */
function contextOf<V extends ApiVersion, K extends OperationIdOf<V>>(inputs: RequestInputs): HandlerContext<V, K> {
  return inputs as HandlerContext<V, K>;
}
