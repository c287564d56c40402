import { ApiError } from '../../errors';
import { defineHandler } from '../../http/handlers';

/** cancelOrder: DELETE /store/orders/{orderId}. Cancels a pending order; a shipped one is a 409, an unknown one a 404. */
export const cancelOrder = defineHandler('cancelOrder', ({ store }) => async ({ path }) => {
  const id = path.orderId;
  const outcome = await store.cancelOrder(id);
  switch (outcome) {
    case 'cancelled':
      return { status: 204 };
    case 'shipped':
      throw new ApiError('order_already_shipped', `Order ${id} has already shipped and cannot be cancelled`);
    case 'not_found':
      throw new ApiError('order_not_found', `Order ${id} was not found`);
  }
});
