import type { Order } from '../contract/types';
import type { OrderSnapshot } from './types';

/** What the stores' shipDate constraint requires, in the words of a migration's refusal. */
export const SHIP_DATE_RULE = 'shipDate must be an RFC 3339 date-time with a time zone, on a real calendar day';

/** The largest id, pet id and quantity either store accepts: JavaScript's safe-integer bound. */
export const SAFE_INTEGER_SQL = String(Number.MAX_SAFE_INTEGER);

/**
 * An orders row as the list queries return it in array mode: id, pet_id, quantity, ship_date,
 * complete (0 or 1). Arrays skip building an object per row, a third of the cost of a page.
 */
export type OrderRow = [id: number, petId: number, quantity: number, shipDate: string, complete: number];

/** The one mapping from a stored row to the contract's Order. */
export function rowToOrder([id, petId, quantity, shipDate, complete]: OrderRow): Order {
  return { id, petId, quantity, shipDate, complete: complete === 1 };
}

/** Reads the store id and revision that make the list's ETag. */
export const META_SQL = 'SELECT store_id, revision FROM store_meta';

/** Bumps the revision; run in the same transaction as every write that changes the list. */
export const BUMP_REVISION_SQL = 'UPDATE store_meta SET revision = revision + 1';

/** The list's weak ETag: the database's random id and its revision. */
export function etagOf(meta: { store_id: string; revision: number }): string {
  return `W/"${meta.store_id}-${meta.revision}"`;
}

/** A snapshot already read whole, for a list that fit in the first page. */
export function snapshotOf(etag: string, orders: Order[]): OrderSnapshot {
  let at = 0;
  return {
    etag,
    read: async (max) => {
      const chunk = orders.slice(at, at + max);
      at += chunk.length;
      return chunk;
    },
    exhausted: () => at >= orders.length,
    close: async () => undefined,
  };
}
