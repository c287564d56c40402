import { defineHandler } from '../../http/define-handler';
import { andThen } from '../../maybe-promise';
import { cancelReply } from '../../http/order-replies';

/** cancelOrder: DELETE /store/orders/{orderId}. As in v1: a pending order is cancelled, in both versions' lists at once. */
export const cancelOrder = defineHandler(
  'v2',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      andThen(store.cancelOrder(path.orderId), (outcome) => cancelReply(path.orderId, outcome)),
);
