import type { BoundHandler } from '../binding';
import type { Step } from './step';

/** handle: the operation's handler, given its inputs (binding.ts): the reply. The last step. */
export function handle(handlers: ReadonlyMap<string, BoundHandler>): Step {
  return (exchange) => {
    const { operationId } = exchange.operation;
    const handler = handlers.get(operationId);
    if (handler === undefined) throw new Error(`no handler is registered for ${operationId}`);
    if (exchange.inputs === undefined) throw new Error(`${operationId} reached its handler unvalidated`);
    return handler(exchange.inputs);
  };
}
