import type { V2Order } from '../contract/types';
import type { OrderMoves, OrderReads, ShipOutcome } from '../store';
import { toV2Order } from './v2-order';

/** What a ship found: the order as the move left it, or why it did not move. */
export type Shipped = { readonly outcome: 'shipped'; readonly order: V2Order } | { readonly outcome: Exclude<ShipOutcome, 'shipped'> };

/** Ships a pending order, with its order.shipped event: the same move as the CLI's `orders ship`. */
export async function shipPending(store: OrderMoves & Pick<OrderReads, 'getOrder'>, id: number): Promise<Shipped> {
  const outcome = await store.shipOrder(id);
  if (outcome !== 'shipped') return { outcome };
  // A shipped order cannot change again, so it is read as the move left it.
  const order = await store.getOrder(id);
  if (order === undefined) throw new Error(`order ${id} shipped, and then could not be read`);
  return { outcome, order: toV2Order(order) };
}
