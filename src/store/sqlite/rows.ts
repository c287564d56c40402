import type { Order } from '../../contract/types';

/** An orders row as the list query returns it. */
export interface OrderRow {
  id: number;
  pet_id: number;
  quantity: number;
  ship_date: string;
  complete: number;
}

/** The list query: every order not cancelled, in id order. */
export const LIST_ORDERS_SQL = `SELECT id, pet_id, quantity, ship_date, complete FROM orders WHERE status <> 'cancelled' ORDER BY id`;

/** Reads the store id and revision that make the list's ETag. */
export const META_SQL = 'SELECT store_id, revision FROM store_meta';

/** Bumps the revision; run in the same transaction as every write that changes the list. */
export const BUMP_REVISION_SQL = 'UPDATE store_meta SET revision = revision + 1';

/** The one mapping from a stored row to the contract's Order. */
export function rowToOrder(row: OrderRow): Order {
  return {
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    shipDate: row.ship_date,
    complete: row.complete === 1,
  };
}

/** The list's weak ETag: the database's random id and its revision. */
export function etagOf(meta: { store_id: string; revision: number }): string {
  return `W/"${meta.store_id}-${meta.revision}"`;
}
