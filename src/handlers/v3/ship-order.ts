import { defineHandler } from '../../http/define-handler';
import { shipReply } from '../../http/order-replies';
import { shipPending } from '../../orders/ship';

/** shipOrder: POST /store/orders/{orderId}/ship. A pending order shipped, with its event; 409 if shipped, 404 if unknown or cancelled. */
export const shipOrder = defineHandler(
  'v3',
  'shipOrder',
  ({ store }) =>
    ({ path }) =>
      shipPending(store, path.orderId).then((shipped) => shipReply(path.orderId, shipped)),
);
