import { RATE_UNITS, type RateUnit } from '../rate-policy';
import { PRUNE_BATCH } from './events';
import type { OrderStatus, PageRequest, RateWindows } from './types';

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

/** The order whose id is `$1`, as an OrderRow, unless it has been cancelled. */
export function orderSql(visible: readonly string[] = []): string {
  return `SELECT ${ORDER_ROW_COLUMNS} FROM orders WHERE ${where(['id = $1', `status <> 'cancelled'`, ...visible])}`;
}

/** Whether an order that has not been cancelled refers to the pet `$1`. */
export function petExistsSql(visible: readonly string[] = []): string {
  return `SELECT 1 AS one FROM orders WHERE ${where(['pet_id = $1', `status <> 'cancelled'`, ...visible])} LIMIT 1`;
}

/**
 * The move of a pending order to cancelled or shipped, with its timestamp, in every store: one
 * conditional update, so that of concurrent moves of one order exactly one happens. `$1` is the
 * time, `$2` the id. Shipping fulfils an order, so a shipped order is complete.
 */
export function movePendingSql(to: 'cancelled' | 'shipped', visible: readonly string[] = []): string {
  const set = to === 'cancelled' ? `status = 'cancelled', cancelled_at = $1` : `status = 'shipped', shipped_at = $1, complete = TRUE`;
  return `UPDATE orders SET ${set} WHERE ${where(['id = $2', `status = 'pending'`, ...visible])}`;
}

/** The API-key statements. */
export const KEY_SQL = {
  create: 'INSERT INTO api_keys (name, key_hash, created_at, expires_at, scopes, rate_limit) VALUES ($1, $2, $3, $4, $5, $6)',
  list: `SELECT name, scopes, rate_limit AS "rateLimit", created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt",
    previous_until AS "previousUntil"
    FROM api_keys ORDER BY id`,
  revoke: 'UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
  /**
   * Changes the active key named `$6`: its expiry to `$2` when `$1` is 1 (null: none), its scopes to
   * `$3` unless null, its rate limit to `$5` when `$4` is 1 (null: the deployment's).
   */
  update: `UPDATE api_keys SET expires_at = CASE WHEN $1 = 1 THEN $2 ELSE expires_at END, scopes = COALESCE($3, scopes),
      rate_limit = CASE WHEN $4 = 1 THEN $5 ELSE rate_limit END
    WHERE name = $6 AND revoked_at IS NULL`,
  /**
   * A new secret for the active key named `$3`, hash `$2`; the one it replaces keeps working until
   * `$1`, and one replaced before is forgotten.
   */
  rotate: 'UPDATE api_keys SET previous_hash = key_hash, previous_until = $1, key_hash = $2 WHERE name = $3 AND revoked_at IS NULL',
  /** Undoes a rotation to hash `$2` of the key named `$1` whose new secret nobody saw: the replaced one is the key's again. */
  unrotate: `UPDATE api_keys SET key_hash = previous_hash, previous_hash = NULL, previous_until = NULL
    WHERE name = $1 AND key_hash = $2 AND previous_hash IS NOT NULL`,
  /**
   * The key whose secret has hash `$2`, and its state at `$1`. Times are ISO 8601 UTC text of one
   * form, so they compare as text. One index entry: what every keyed request reads.
   */
  find: `SELECT name, CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= $1 THEN 'expired' ELSE 'active' END AS state,
      scopes, rate_limit AS "rateLimit" FROM api_keys WHERE key_hash = $2`,
  /**
   * The key whose replaced secret has hash `$3`, and its state at `$1` (`$2` the same): refused as a
   * revoked key once its grace has ended. Read only when `find` found nothing: an old secret in its
   * grace, or no key at all.
   */
  findReplaced: `SELECT name, CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= $1 THEN 'expired'
      WHEN previous_until > $2 THEN 'active' ELSE 'revoked' END AS state, scopes, rate_limit AS "rateLimit"
    FROM api_keys WHERE previous_hash = $3`,
} as const;

/** The units in the order key_usage's statements name them, and each one's columns' prefix. */
const USAGE_UNITS: readonly RateUnit[] = ['s', 'min', 'h', 'day'];
const USAGE_COLUMNS: { readonly [U in RateUnit]: string } = { s: 'second', min: 'minute', h: 'hour', day: 'day' };
const USAGE_RETURNING = USAGE_UNITS.map((unit) => `${USAGE_COLUMNS[unit]}_start, ${USAGE_COLUMNS[unit]}_used`).join(', ');

/**
 * The statements of a key's rate-limit count, with the database's clock (`clock`, whole seconds).
 * `count` counts one request of the key named `$1` in the current window of every unit, unless the
 * window of some unit already holds its quota (`$2` per second, `$3` per minute, `$4` per hour,
 * `$5` per day; a unit without a policy is given a quota never reached): one upsert, so that the
 * check and the count are one atomic step in every instance (the row's lock on PostgreSQL, the
 * write lock on SQLite), and a refused request changes nothing. It answers the windows after the
 * count and the clock's `now`, or no row when it refused; `read` then answers them as they stand.
 */
export function rateSql(clock: string): { readonly count: string; readonly read: string } {
  const starts = USAGE_UNITS.map((unit) => (RATE_UNITS[unit] === 1 ? clock : `${clock} - ${clock} % ${RATE_UNITS[unit]}`));
  const columns = USAGE_UNITS.map((unit) => USAGE_COLUMNS[unit]);
  const set = columns
    .map(
      (column) =>
        `${column}_used = CASE WHEN u.${column}_start = excluded.${column}_start THEN u.${column}_used + 1 ELSE 1 END, ${column}_start = excluded.${column}_start`,
    )
    .join(',\n      ');
  const room = columns.map((column, i) => `(u.${column}_start <> excluded.${column}_start OR u.${column}_used < $${i + 2})`).join(' AND ');
  return {
    count: `INSERT INTO key_usage AS u (key_name, ${USAGE_RETURNING})
      VALUES ($1, ${starts.map((start) => `${start}, 1`).join(', ')})
    ON CONFLICT (key_name) DO UPDATE SET
      ${set}
    WHERE ${room}
    RETURNING ${USAGE_RETURNING}, ${clock} AS now`,
    read: `SELECT ${USAGE_RETURNING}, ${clock} AS now FROM key_usage WHERE key_name = $1`,
  };
}

/** The values of rateSql's `count` for the named key: its quota of each unit, or one never reached. */
export function rateCountValues(keyName: string, quotas: Partial<Record<RateUnit, number>>): unknown[] {
  return [keyName, ...USAGE_UNITS.map((unit) => quotas[unit] ?? Number.MAX_SAFE_INTEGER)];
}

/** A row of rateSql's statements as the windows it holds (PostgreSQL gives a BIGINT as text). */
export function rateWindowsOf(row: Record<string, unknown>): RateWindows {
  const at = (column: string) => Number(row[column]);
  const window = (unit: RateUnit) => ({ start: at(`${USAGE_COLUMNS[unit]}_start`), used: at(`${USAGE_COLUMNS[unit]}_used`) });
  return { now: at('now'), s: window('s'), min: window('min'), h: window('h'), day: window('day') };
}

/** The columns a placed order is written with, in this order: its id, then placedOrderValues' (src/store/core.ts), then its status. */
export const PLACED_COLUMNS = 'id, pet_id, quantity, ship_date, ship_at, created_at, complete, status';

/**
 * The statements of a placement (Store.placeOrder), in the order it runs them in one transaction:
 * the Idempotency-Key's record, if one is kept; the placed order, with the id the store gives it
 * (`$1`) and its ship instant; the key's record of it, over an expired one. Then its event and the
 * revision bump, as every write of an order. `$n` of `order`: id, pet, quantity, ship date, ship
 * instant, time, and `complete` false in the store's own form.
 */
export const PLACEMENT_SQL = {
  record: 'SELECT fingerprint, answer FROM idempotency_keys WHERE key_name = $1 AND idem_key = $2 AND created_at >= $3',
  order: `INSERT INTO orders (${PLACED_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending')`,
  remember: `INSERT INTO idempotency_keys (key_name, idem_key, fingerprint, order_id, answer, created_at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (key_name, idem_key) DO UPDATE SET
      fingerprint = excluded.fingerprint, order_id = excluded.order_id, answer = excluded.answer, created_at = excluded.created_at`,
  /** Up to PRUNE_BATCH records made before `$1`, per statement. */
  prune: `DELETE FROM idempotency_keys WHERE (key_name, idem_key) IN (SELECT key_name, idem_key FROM idempotency_keys WHERE created_at < $1 LIMIT ${PRUNE_BATCH})`,
} as const;

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
    cancel: movePendingSql('cancelled', visible),
    ship: movePendingSql('shipped', visible),
    keys: KEY_SQL,
    page: (request: PageRequest) => pageQuery(request, visible),
  } as const;
}

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
