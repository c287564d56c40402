import { ApiError } from '../errors';
import { andThen, type MaybePromise } from '../maybe-promise';
import type { Store, CancelOutcome } from '../store';

/**
 * Cancels a pending order, in every version that offers cancelOrder: its 204 once it is
 * cancelled; a shipped order is a 409, an unknown or already cancelled one a 404. The answer comes
 * at once when the store's does (an order that is not pending, on SQLite).
 */
export function cancelPending(store: Store, id: number): MaybePromise<{ status: 204 }> {
  return andThen(store.cancelOrder(id), (outcome) => cancelled(id, outcome));
}

function cancelled(id: number, outcome: CancelOutcome): { status: 204 } {
  switch (outcome) {
    case 'cancelled':
      return { status: 204 };
    case 'shipped':
      throw new ApiError('order_already_shipped', `Order ${id} has already shipped and cannot be cancelled`);
    case 'not_found':
      throw new ApiError('order_not_found', `Order ${id} was not found`);
  }
}
