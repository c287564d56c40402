import type { V2OrderEvent } from '../../contract/types';
import { ApiError } from '../../errors';
import { defineHandler } from '../../http/define-handler';
import type { EventPosition, OrderEventRecord } from '../../store';
import { eventCursors } from '../../orders/cursor';
import { toV2Order } from '../../orders/v2-order';

/**
 * listOrderEvents: GET /store/order-events. The changes committed after a cursor, in commit order,
 * and where to read on (never null). With `wait`, a request that finds none waits for one
 * (EventFeed), holding no database connection.
 */
export const listOrderEvents = defineHandler('v2', 'listOrderEvents', ({ store, secret, feed }) => {
  const signed = eventCursors(secret);
  return async ({ query }) => {
    // The document gives limit and wait defaults, which the input reader applies.
    const { limit, wait, after, from } = query;
    if (limit === undefined || wait === undefined)
      throw new Error('limit and wait have defaults in the document, which the input reader applies');
    if (after !== undefined && from !== undefined) {
      throw new ApiError('invalid_request', 'from is only for a first read: with after, the feed reads on from that cursor');
    }
    const read = (at: EventPosition | 'oldest') => feed.read(() => store.readEvents(at, limit));
    let page =
      after !== undefined
        ? await read(signed.read(after))
        : from === 'latest'
          ? { events: [], next: await store.latestEventPosition() }
          : await read('oldest');
    if (page.events.length === 0 && wait > 0) {
      const at = page.next;
      page = await feed.waitFor(page, () => read(at), wait * 1000);
    }
    return { status: 200, body: { events: page.events.map(toV2Event), nextCursor: signed.make(page.next) } };
  };
});

/** v2's OrderEvent for a stored event. */
function toV2Event({ type, orderId, occurredAt, order }: OrderEventRecord): V2OrderEvent {
  return order === undefined ? { type, orderId, occurredAt } : { type, orderId, occurredAt, order: toV2Order(order) };
}
