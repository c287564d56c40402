import { defineHandler } from '../../http/handlers';
import { cancelPending } from '../cancel';

/** cancelOrder: DELETE /store/orders/{orderId}. As in v1: a pending order is cancelled, in both versions' lists at once. */
export const cancelOrder = defineHandler(
  'v2',
  'cancelOrder',
  ({ store }) =>
    ({ path }) =>
      cancelPending(store, path.orderId),
);
