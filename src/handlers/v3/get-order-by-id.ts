import { defineHandler } from '../../http/define-handler';
import { readOrder } from '../../orders/read';

/**
 * getOrderById: GET /store/orders/{orderId}. The order as it is now, with a weak ETag; 304 while
 * the client's tag still matches; 404 for an unknown or a cancelled order (src/orders/read.ts).
 */
export const getOrderById = defineHandler(
  'v3',
  'getOrderById',
  ({ store }) =>
    ({ path, headers }) =>
      readOrder(store, path.orderId, headers['If-None-Match']),
);
