import type { V2Order } from '../contract/types';
import type { OrderRecord } from '../store';

/**
 * v2's Order for a stored order: v1's five fields and its status. Typed by the Order generated
 * from v2's document, so a change to that schema this mapping does not follow fails the typecheck.
 * A cancelled order is never listed; meeting one here is a bug, which the reply check would stop.
 */
export function toV2Order({ id, petId, quantity, shipDate, complete, status }: OrderRecord): V2Order {
  if (status === 'cancelled') throw new Error(`order ${id} is cancelled and cannot be shown`);
  return { id, petId, quantity, shipDate, complete, status };
}
