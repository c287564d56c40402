import type { V2OrderEvent } from '../contract/types';
import { ApiError } from '../errors';
import type { EventFeed } from '../feed/event-feed';
import type { EventLog, EventPosition, OrderEventRecord } from '../store';
import { eventCursors } from './cursor';
import { toV2Order } from './v2-order';

/** The query of the change feed (v2 on), as the input reader gives it: defaults applied. */
export interface EventPageQuery {
  readonly after?: string | undefined;
  readonly from?: 'oldest' | 'latest' | undefined;
  readonly limit?: number | undefined;
  readonly wait?: number | undefined;
}

/** listOrderEvents' reply. */
export interface EventPageReply {
  status: 200;
  body: { events: V2OrderEvent[]; nextCursor: string };
}

/**
 * The reader of the change feed: the changes committed after a cursor, in commit order, and where
 * to read on (never null). With `wait`, a request that finds none waits for one (EventFeed),
 * holding no database connection.
 */
export function eventPages(store: EventLog, secret: Buffer, feed: EventFeed): (query: EventPageQuery) => Promise<EventPageReply> {
  const signed = eventCursors(secret);
  return async (query) => {
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
    return { status: 200, body: { events: page.events.map(orderEventOf), nextCursor: signed.make(page.next) } };
  };
}

/** The OrderEvent for a stored event, as the feed serves it. */
export function orderEventOf({ type, orderId, occurredAt, order }: OrderEventRecord): V2OrderEvent {
  return order === undefined ? { type, orderId, occurredAt } : { type, orderId, occurredAt, order: toV2Order(order) };
}
