import { hash } from 'node:crypto';
import type { V2Order } from '../../contract/types';
import { ApiError } from '../../errors';
import { ifNoneMatchMatches } from '../../http/conditional';
import { defineHandler } from '../../http/define-handler';
import { andThen } from '../../maybe-promise';
import { toV2Order } from '../../orders/v2-order';

/**
 * getOrderById: GET /store/orders/{orderId}. The order as it is now, with a weak ETag of what it
 * says; 304 while the client's tag still matches; 404 for an unknown or a cancelled order (gone for
 * clients, as from every list). On SQLite the answer comes at once, without a turn of the event loop.
 */
export const getOrderById = defineHandler(
  'v2',
  'getOrderById',
  ({ store }) =>
    ({ path, headers }) =>
      andThen(store.getOrder(path.orderId), (record) => {
        if (record === undefined) throw new ApiError('order_not_found', `Order ${path.orderId} was not found`);
        const order = toV2Order(record);
        const etag = orderEtag(order);
        if (ifNoneMatchMatches(headers['If-None-Match'], etag)) return { status: 304, headers: { ETag: etag } };
        return { status: 200, body: order, headers: { ETag: etag } };
      }),
);

/**
 * A digest of the order as it is sent: two replies get the same tag exactly when they say the same
 * thing, whichever instance or store answers (only an order's status ever changes, when it ships).
 */
function orderEtag(order: V2Order): string {
  // The one-shot hash: the same digest as a createHash object's, without the object, on every read.
  return `W/"${hash('sha256', JSON.stringify(order), 'base64url').slice(0, 22)}"`;
}
