import { defineHandler } from '../../http/define-handler';
import { andThen } from '../../maybe-promise';
import { cancelReply } from '../../http/order-replies';

/** cancelOrder: DELETE /store/orders/{orderId}. Cancels a pending order; a shipped one is a 409, an unknown one a 404. */
export const cancelOrder = defineHandler(
  'v1',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      andThen(store.cancelOrder(path.orderId), (outcome) => cancelReply(path.orderId, outcome)),
);
