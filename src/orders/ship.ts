import type { V2Order } from '../contract/types';
import { ApiError } from '../errors';
import type { Store } from '../store';
import { toV2Order } from './v2-order';

/**
 * Ships a pending order over HTTP (v3's shipOrder): the same move as the CLI's `orders ship`, with
 * its order.shipped event; 200 with the shipped order, 409 for one already shipped, 404 for an
 * unknown or cancelled one.
 */
export async function shipPending(store: Store, id: number): Promise<{ status: 200; body: V2Order }> {
  switch (await store.shipOrder(id)) {
    case 'shipped': {
      // A shipped order cannot change again, so it is read as the move left it.
      const order = await store.getOrder(id);
      if (order === undefined) throw new Error(`order ${id} shipped, and then could not be read`);
      return { status: 200, body: toV2Order(order) };
    }
    case 'already_shipped':
      throw new ApiError('order_already_shipped', `Order ${id} has already shipped`);
    case 'cancelled':
    case 'not_found':
      throw new ApiError('order_not_found', `Order ${id} was not found`);
  }
}
