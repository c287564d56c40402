import type { V2Order } from '../contract/types';
import { instantKey } from '../date-time';
import type { OrderFilter, OrderReads } from '../store';
import { cursors } from './cursor';
import { toV2Order } from './v2-order';

/** The query of a paged, filtered order list (v2 on), as the input reader gives it: defaults applied. */
export interface OrderPageQuery {
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
  readonly status?: 'pending' | 'shipped' | undefined;
  readonly petId?: number | undefined;
  readonly complete?: boolean | undefined;
  readonly shipDateFrom?: string | undefined;
  readonly shipDateTo?: string | undefined;
}

/** listOrders' reply: a page, and a `Link` to the next one when there is one. */
export type OrderPageReply =
  | { status: 200; body: { orders: V2Order[]; nextCursor: null } }
  | { status: 200; body: { orders: V2Order[]; nextCursor: string }; headers: { Link: string } };

/**
 * The lister of one version's `GET <listPath>`: one page of the orders not cancelled that match
 * every filter, in id order, read by keyset (the page after the cursor's last id), so a page costs
 * the same however deep it is, and walking every page returns each matching order once while
 * others change. `listPath` is where the `Link` to the next page points.
 */
export function orderPages(
  store: Pick<OrderReads, 'pageOrders'>,
  secret: Buffer,
  listPath: string,
): (query: OrderPageQuery) => Promise<OrderPageReply> {
  const signed = cursors(secret);
  return async (query) => {
    // The document gives limit a default, which the input reader applies.
    const { limit } = query;
    if (limit === undefined) throw new Error('limit has no value: the document gives it a default, which the input reader applies');
    const filter: OrderFilter = {
      status: query.status,
      petId: query.petId,
      complete: query.complete,
      shipFrom: query.shipDateFrom === undefined ? undefined : instantKey(query.shipDateFrom),
      shipTo: query.shipDateTo === undefined ? undefined : instantKey(query.shipDateTo),
    };
    // What a cursor is bound to: the filters, as instants, and the limit.
    const binding = JSON.stringify([limit, filter.status, filter.petId, filter.complete, filter.shipFrom, filter.shipTo]);
    const after = query.cursor === undefined ? undefined : signed.read(query.cursor, binding);
    // One more than the page, to know whether a next page exists without a second query.
    const records = await store.pageOrders({ filter, after, limit: limit + 1 });
    const orders = records.slice(0, limit).map(toV2Order);
    const last = orders[orders.length - 1];
    if (records.length <= limit || last === undefined) return { status: 200, body: { orders, nextCursor: null } };
    const nextCursor = signed.make(last.id, binding);
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...query, limit, cursor: nextCursor })) {
      if (value !== undefined) next.set(name, String(value));
    }
    return { status: 200, body: { orders, nextCursor }, headers: { Link: `<${listPath}?${next.toString()}>; rel="next"` } };
  };
}
