import { defineHandler } from '../../http/define-handler';
import { orderPages } from '../../orders/page';

/**
 * listOrders: GET /store/orders. One page of the orders not cancelled that match every filter, in
 * id order, read by keyset, with the `Link` of the next page under /v3 (src/orders/page.ts).
 */
export const listOrders = defineHandler('v3', 'listOrders', ({ store, secret }) => {
  const list = orderPages(store, secret, '/v3/store/orders');
  return ({ query }) => list(query);
});
