import type { Order } from '../contract/types';
import type { OrderRecord } from '../store';

/**
 * v1's Order for a stored order: every field but its status, which v1 does not show (its list has
 * pending and shipped orders alike). Typed by the Order generated from v1's document, so a change to
 * that schema this mapping does not follow fails the typecheck, and the reply check refuses any
 * field it does not declare.
 */
export function toV1Order({ id, petId, quantity, shipDate, complete }: OrderRecord): Order {
  return { id, petId, quantity, shipDate, complete };
}
