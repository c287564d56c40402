import { defineHandler } from '../../http/define-handler';
import { eventPages } from '../../orders/events';

/**
 * listOrderEvents: GET /store/order-events. The changes committed after a cursor, in commit order,
 * and where to read on; with `wait`, a request that finds none waits for one (src/orders/events.ts).
 */
export const listOrderEvents = defineHandler('v3', 'listOrderEvents', ({ store, secret, feed }) => {
  const read = eventPages(store, secret, feed);
  return ({ query }) => read(query);
});
