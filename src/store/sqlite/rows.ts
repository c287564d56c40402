/** One page of the list, by keyset: the orders not cancelled with an id above `after`, in id order. */
export const LIST_PAGE_SQL = `SELECT id, pet_id, quantity, ship_date, complete, status FROM orders
  WHERE status <> 'cancelled' AND id > @after ORDER BY id LIMIT @limit`;

export { BEFORE_FIRST_ID } from '../shared';
