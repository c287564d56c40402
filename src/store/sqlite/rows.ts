/**
 * The orders every read and write of the SQLite store sees: not those of an import still being
 * published a slice at a time (./import.ts), the orders between its first and last id. Each bound
 * is read once per statement, in the statement's own snapshot; when nothing is being published the
 * range is empty (from 1 to 0).
 */
export const PUBLISHED =
  'id NOT BETWEEN (SELECT coalesce(min(from_id), 1) FROM import_publishing) AND (SELECT coalesce(min(to_id), 0) FROM import_publishing)';

/** One page of the list, by keyset: the orders not cancelled with an id above `after`, in id order. */
export const LIST_PAGE_SQL = `SELECT id, pet_id, quantity, ship_date, complete, status FROM orders
  WHERE status <> 'cancelled' AND id > @after AND ${PUBLISHED} ORDER BY id LIMIT @limit`;

export { BEFORE_FIRST_ID } from '../shared';
