import type { Operation } from '../../openapi';
import { isExpensive, type Admission } from '../admission';
import type { Step } from './step';

/**
 * admit: an operation whose work grows with the store (a list, a page) waits for its turn, or is
 * shed with a 503 (admission.ts); every other goes on at once.
 */
export function admit(admission: Admission, operations: readonly Operation[]): Step {
  const expensive = new Set(operations.filter(isExpensive));
  return (exchange, next) => {
    const admitted = expensive.has(exchange.operation) ? admission.admit(exchange.operation, exchange.res) : undefined;
    return admitted === undefined ? next() : admitted.then(next);
  };
}
