import type { Order } from '../../contract/types';

/**
 * An orders row as the list query returns it in raw mode: id, pet_id, quantity, ship_date, complete.
 * Raw rows skip building an object per row, which is a third of the cost of reading a page.
 */
export type OrderRow = [id: number, petId: number, quantity: number, shipDate: string, complete: number];

/** One page of the list, by keyset: the orders not cancelled with an id above `after`, in id order. */
export const LIST_PAGE_SQL = `SELECT id, pet_id, quantity, ship_date, complete FROM orders
  WHERE status <> 'cancelled' AND id > @after ORDER BY id LIMIT @limit`;

/** Below every id, for the first page. */
export const BEFORE_FIRST_ID = -Number.MAX_SAFE_INTEGER - 1;

/** Reads the store id and revision that make the list's ETag. */
export const META_SQL = 'SELECT store_id, revision FROM store_meta';

/** Bumps the revision; run in the same transaction as every write that changes the list. */
export const BUMP_REVISION_SQL = 'UPDATE store_meta SET revision = revision + 1';

/** The one mapping from a stored row to the contract's Order. */
export function rowToOrder([id, petId, quantity, shipDate, complete]: OrderRow): Order {
  return { id, petId, quantity, shipDate, complete: complete === 1 };
}

/** The list's weak ETag: the database's random id and its revision. */
export function etagOf(meta: { store_id: string; revision: number }): string {
  return `W/"${meta.store_id}-${meta.revision}"`;
}
