import { defineHandler } from '../../http/define-handler';
import { cancelPending } from '../../orders/cancel';

/** cancelOrder: DELETE /store/orders/{orderId}. As in v1 and v2: a pending order is cancelled, in every version's lists at once. */
export const cancelOrder = defineHandler(
  'v3',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      cancelPending(store, path.orderId),
);
