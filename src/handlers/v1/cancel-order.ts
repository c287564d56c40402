import { defineHandler } from '../../http/define-handler';
import { cancelPending } from '../../orders/cancel';

/** cancelOrder: DELETE /store/orders/{orderId}. Cancels a pending order; a shipped one is a 409, an unknown one a 404. */
export const cancelOrder = defineHandler(
  'v1',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      cancelPending(store, path.orderId),
);
