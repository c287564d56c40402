import { instantKey } from '../../date-time';
import { defineHandler } from '../../http/define-handler';
import type { OrderFilter } from '../../store';
import { cursors } from '../../orders/cursor';
import { toV2Order } from '../../orders/v2-order';

/**
 * listOrders: GET /store/orders. One page of the orders not cancelled that match every filter, in
 * id order, read by keyset (the page after the cursor's last id), so a page costs the same however
 * deep it is, and walking every page returns each matching order once while others change.
 */
export const listOrders = defineHandler('v2', 'listOrders', ({ store, secret }) => {
  const signed = cursors(secret);
  return async ({ query }) => {
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
    if (records.length <= limit) return { status: 200, body: { orders, nextCursor: null } };
    const last = orders[orders.length - 1];
    if (last === undefined) return { status: 200, body: { orders, nextCursor: null } };
    const nextCursor = signed.make(last.id, binding);
    const next = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...query, limit, cursor: nextCursor })) {
      if (value !== undefined) next.set(name, String(value));
    }
    return { status: 200, body: { orders, nextCursor }, headers: { Link: `</v2/store/orders?${next.toString()}>; rel="next"` } };
  };
});
