import { hash } from 'node:crypto';
import type { V2Order } from '../contract/types';
import { andThen, type MaybePromise } from '../maybe-promise';
import type { OrderReads } from '../store';
import { toV2Order } from './v2-order';

/** One order as it is now, with a weak ETag of what it says. */
export interface OrderRead {
  readonly order: V2Order;
  readonly etag: string;
}

/**
 * One order as it is now, with a weak ETag of what it says; none for an unknown or a cancelled
 * order (gone for clients, as from every list). On SQLite the answer comes at once, without a turn
 * of the event loop.
 */
export function readOrder(store: Pick<OrderReads, 'getOrder'>, id: number): MaybePromise<OrderRead | undefined> {
  return andThen(store.getOrder(id), (record) => {
    if (record === undefined) return undefined;
    const order = toV2Order(record);
    return { order, etag: orderEtag(order) };
  });
}

/**
 * A digest of the order as it is sent: two replies get the same tag exactly when they say the same
 * thing, whichever instance, store or version answers (an order changes only when it ships).
 */
function orderEtag(order: V2Order): string {
  // The one-shot hash: the same digest as a createHash object's, without the object, on every read.
  return `W/"${hash('sha256', JSON.stringify(order), 'base64url').slice(0, 22)}"`;
}
