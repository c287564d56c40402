import { defineHandler } from '../../http/define-handler';
import { cancelPending } from '../../orders/cancel';

/** cancelOrder: DELETE /store/orders/{orderId}. As in v1: a pending order is cancelled, in both versions' lists at once. */
export const cancelOrder = defineHandler(
  'v2',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      cancelPending(store, path.orderId),
);
