import { defineHandler } from '../../http/define-handler';
import { andThen } from '../../maybe-promise';
import { cancelReply } from '../../http/order-replies';

/** cancelOrder: DELETE /store/orders/{orderId}. As in v1 and v2: a pending order is cancelled, in every version's lists at once. */
export const cancelOrder = defineHandler(
  'v3',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      andThen(store.cancelOrder(path.orderId), (outcome) => cancelReply(path.orderId, outcome)),
);
