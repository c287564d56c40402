import type { OrderStatus, PageRequest } from './types';

// Every statement the stores share, written once with `$1, $2, …` placeholders (each dialect
// takes them through its `placeholders`). `visible` is a store's own condition on the orders it may
// touch (SQLite's PUBLISHED, which hides an import still being published); none by default.

/**
 * An orders row as the list queries return it in array mode: id, pet_id, quantity, ship_date,
 * complete (0 or 1 in SQLite, a boolean in PostgreSQL), status. Arrays skip building an object per
 * row, a third of the cost of a page.
 */
export type OrderRow = [id: number, petId: number, quantity: number, shipDate: string, complete: number | boolean, status: OrderStatus];

/** The columns of an OrderRow, in its order: what every read of orders selects. */
export const ORDER_ROW_COLUMNS = 'id, pet_id, quantity, ship_date, complete, status';

/**
 * A row of the list's snapshot (snapshotSql): an OrderRow without its status, which the list
 * does not show. A text column costs a string per row (docs/performance-log.md has its share).
 */
export type ListedRow = [id: number, petId: number, quantity: number, shipDate: string, complete: number | boolean];

/** The columns of a ListedRow, in its order. */
export const LISTED_COLUMNS = 'id, pet_id, quantity, ship_date, complete';

/**
 * What an import record gives an order besides its id, and the ship instant the store derives from
 * its ship date: what both stores stage, in this order.
 */
export const RECORD_COLUMNS = 'pet_id, quantity, ship_date, complete, status, ship_at';

/** The columns every import writes an order with after its id, in this order: RECORD_COLUMNS, then its times (importedTimes). */
export const IMPORTED_COLUMNS = `${RECORD_COLUMNS}, created_at, shipped_at`;

/** An imported order's times, after RECORD_COLUMNS: created at `created`, and shipped at `shipped` when it is imported shipped. */
export function importedTimes(created: string, shipped: string): string {
  return `${created}, CASE status WHEN 'shipped' THEN ${shipped} END`;
}

/** Below every id, for the first page of a keyset read. */
export const BEFORE_FIRST_ID = -Number.MAX_SAFE_INTEGER - 1;

/** Reads the store id and revision that make the list's ETag. */
export const META_SQL = 'SELECT store_id, revision FROM store_meta';

/** Bumps the revision; run in the same transaction as every write that changes the list. */
export const BUMP_REVISION_SQL = 'UPDATE store_meta SET revision = revision + 1';

const where = (conditions: readonly string[]): string => conditions.join(' AND ');

/**
 * The list: the orders not cancelled with an id above `$1`, in id order, at most `$2` of them (no
 * bound: NULL in PostgreSQL, -1 in SQLite). Read a page at a time by keyset, or whole by a cursor.
 */
export function listSql(visible: readonly string[] = [], columns = ORDER_ROW_COLUMNS): string {
  return `SELECT ${columns} FROM orders WHERE ${where([`status <> 'cancelled'`, 'id > $1', ...visible])} ORDER BY id LIMIT $2`;
}

/** The list's snapshot: the orders listSql reads, as ListedRows. */
export function snapshotSql(visible: readonly string[] = []): string {
  return listSql(visible, LISTED_COLUMNS);
}

/** Any order at all, cancelled or not. */
export function anyOrderSql(visible: readonly string[] = []): string {
  return `SELECT 1 AS one FROM orders${visible.length === 0 ? '' : ` WHERE ${where(visible)}`} LIMIT 1`;
}

/** The status of the order whose id is the placeholder `id`, if there is one. */
export function statusSql(visible: readonly string[] = [], id = '$1'): string {
  return `SELECT status FROM orders WHERE ${where([`id = ${id}`, ...visible])}`;
}

/**
 * The order whose id is `$1`, as an OrderRow, unless it has been cancelled; or, with `ids` (a
 * condition on `id`, such as PostgreSQL's `id = ANY($1)`), each such order it names.
 */
export function orderSql(visible: readonly string[] = [], ids = 'id = $1'): string {
  return `SELECT ${ORDER_ROW_COLUMNS} FROM orders WHERE ${where([ids, `status <> 'cancelled'`, ...visible])}`;
}

/** Whether an order that has not been cancelled refers to the pet `$1`. */
export function petExistsSql(visible: readonly string[] = []): string {
  return `SELECT 1 AS one FROM orders WHERE ${where(['pet_id = $1', `status <> 'cancelled'`, ...visible])} LIMIT 1`;
}

/**
 * The conditional update of a move, in every store, answering the id of the order it moved (no row:
 * none was pending): `$1` is the time, `$2` the id; `visible` is the store's condition on the
 * orders it may touch.
 */
export function movePendingSql(to: 'cancelled' | 'shipped', visible: readonly string[] = []): string {
  const set = to === 'cancelled' ? `status = 'cancelled', cancelled_at = $1` : `status = 'shipped', shipped_at = $1, complete = TRUE`;
  return `UPDATE orders SET ${set} WHERE ${where(['id = $2', `status = 'pending'`, ...visible])} RETURNING id`;
}

/**
 * Every statement a store runs on orders, keys and its meta row, for the store's `visible`
 * condition: each store prepares these, and only these, on its own connections.
 */
export function storeSql(visible: readonly string[] = []) {
  return {
    meta: META_SQL,
    bumpRevision: BUMP_REVISION_SQL,
    snapshot: snapshotSql(visible),
    anyOrder: anyOrderSql(visible),
    order: orderSql(visible),
    status: statusSql(visible),
    petExists: petExistsSql(visible),
    moves: { cancelled: movePendingSql('cancelled', visible), shipped: movePendingSql('shipped', visible) },
    page: (request: PageRequest) => pageQuery(request, visible),
  } as const;
}

/** The statements of one store's `visible` condition (storeSql). */
export type StoreSql = ReturnType<typeof storeSql>;

/**
 * The SQL of one page. Unfiltered, a page is the list from a key (listSql); for one pet, that pet's
 * orders in id order (orders_page_by_pet). Otherwise an index orders by id only below its equality
 * columns, so the page is the union of one branch per (status, complete) pair the filter allows,
 * each read in id order from orders_page and cut at `limit`, then merged: at most four branches of
 * at most `limit` rows, however many orders the store holds.
 */
export function pageQuery({ filter, after, limit }: PageRequest, visible: readonly string[] = []): { text: string; values: unknown[] } {
  const { status, petId, complete, shipFrom, shipTo } = filter;
  if (status === undefined && petId === undefined && complete === undefined && shipFrom === undefined && shipTo === undefined) {
    // The keyset always, so that each store reads its index from a key, never from the start of the table.
    return { text: listSql(visible), values: [after ?? BEFORE_FIRST_ID, limit] };
  }
  const values: unknown[] = [];
  const placeholder = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  /** One branch: the orders not cancelled that meet `equal` and the ship range, after the keyset, in id order. */
  const branch = (equal: string[], keyset: number | undefined): string => {
    const conditions = [`status <> 'cancelled'`, ...visible, ...equal];
    if (shipFrom !== undefined) conditions.push(`ship_at >= ${placeholder(shipFrom)}`);
    if (shipTo !== undefined) conditions.push(`ship_at < ${placeholder(shipTo)}`);
    if (keyset !== undefined) conditions.push(`id > ${placeholder(keyset)}`);
    return `SELECT ${ORDER_ROW_COLUMNS} FROM orders WHERE ${where(conditions)} ORDER BY id LIMIT ${placeholder(limit)}`;
  };
  const statusIs = (value: string): string => `status = '${value}'`;
  const completeIs = (value: boolean): string => `complete = ${value ? 'TRUE' : 'FALSE'}`;
  if (petId !== undefined) {
    const equal = [`pet_id = ${placeholder(petId)}`];
    if (status !== undefined) equal.push(statusIs(status));
    if (complete !== undefined) equal.push(completeIs(complete));
    return { text: branch(equal, after ?? BEFORE_FIRST_ID), values };
  }
  const branches: string[] = [];
  for (const each of status === undefined ? (['pending', 'shipped'] as const) : [status]) {
    for (const done of complete === undefined ? [false, true] : [complete])
      branches.push(branch([statusIs(each), completeIs(done)], after));
  }
  if (branches.length === 1) return { text: branches[0]!, values };
  const union = branches.map((each, i) => `SELECT * FROM (${each}) AS b${i}`).join(' UNION ALL ');
  return { text: `${union} ORDER BY id LIMIT ${placeholder(limit)}`, values };
}
