import { ApiError } from '../errors';
import type { Store } from '../store';

/**
 * Cancels a pending order, in every version that offers cancelOrder: resolves once it is cancelled;
 * a shipped order is a 409, an unknown or already cancelled one a 404.
 */
export async function cancelPending(store: Store, id: number): Promise<void> {
  const outcome = await store.cancelOrder(id);
  switch (outcome) {
    case 'cancelled':
      return;
    case 'shipped':
      throw new ApiError('order_already_shipped', `Order ${id} has already shipped and cannot be cancelled`);
    case 'not_found':
      throw new ApiError('order_not_found', `Order ${id} was not found`);
  }
}
