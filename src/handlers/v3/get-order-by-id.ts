import { conditionalReply } from '../../http/conditional';
import { defineHandler } from '../../http/define-handler';
import { andThen } from '../../maybe-promise';
import { notFound } from '../../http/order-replies';
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
      andThen(readOrder(store, path.orderId), (read) => {
        if (read === undefined) throw notFound(path.orderId);
        return conditionalReply(read, read.order, headers['If-None-Match']);
      }),
);
