import { shipDateRule } from './date-time-sql';
import type { Dialect } from './dialect';
import type { MigrationPrecondition } from './migration';
import type { OrderStatus, PageRequest } from './types';

// Every statement the stores share, written once with `$1, $2, …` placeholders (each dialect
// takes them through its `placeholders`). `visible` is a store's own condition on the orders it may
// touch (SQLite's PUBLISHED, which hides an import still being published); none by default.

/** What the stores' shipDate constraint requires, in the words of a migration's refusal. */
export const SHIP_DATE_RULE = 'shipDate must be an RFC 3339 date-time with a time zone, on a real calendar day';

/** The largest id, pet id and quantity either store accepts: JavaScript's safe-integer bound. */
export const SAFE_INTEGER_SQL = String(Number.MAX_SAFE_INTEGER);

/**
 * An orders row as the list queries return it in array mode: id, pet_id, quantity, ship_date,
 * complete (0 or 1 in SQLite, a boolean in PostgreSQL), status. Arrays skip building an object per
 * row, a third of the cost of a page.
 */
export type OrderRow = [id: number, petId: number, quantity: number, shipDate: string, complete: number | boolean, status: OrderStatus];

/** The columns of an OrderRow, in its order. */
export const ORDER_COLUMNS = 'id, pet_id, quantity, ship_date, complete, status';

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
export function listSql(visible: readonly string[] = []): string {
  return `SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where([`status <> 'cancelled'`, 'id > $1', ...visible])} ORDER BY id LIMIT $2`;
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
  return `SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where(['id = $1', `status <> 'cancelled'`, ...visible])}`;
}

/** Whether an order that has not been cancelled refers to the pet `$1`. */
export function petExistsSql(visible: readonly string[] = []): string {
  return `SELECT 1 AS one FROM orders WHERE ${where(['pet_id = $1', `status <> 'cancelled'`, ...visible])} LIMIT 1`;
}

/**
 * The move of a pending order to cancelled or shipped, with its timestamp, in every store: one
 * conditional update, so that of concurrent moves of one order exactly one happens. `$1` is the
 * time, `$2` the id.
 */
export function movePendingSql(to: 'cancelled' | 'shipped', visible: readonly string[] = []): string {
  return `UPDATE orders SET status = '${to}', ${to === 'cancelled' ? 'cancelled_at' : 'shipped_at'} = $1 WHERE ${where(['id = $2', `status = 'pending'`, ...visible])}`;
}

/** The API-key statements. */
export const KEY_SQL = {
  create: 'INSERT INTO api_keys (name, key_hash, created_at) VALUES ($1, $2, $3)',
  list: 'SELECT name, created_at AS "createdAt", revoked_at AS "revokedAt" FROM api_keys ORDER BY id',
  revoke: 'UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
  findActive: 'SELECT name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
} as const;

/**
 * Every statement a store runs on orders, keys and its meta row, for the store's `visible`
 * condition: each store prepares these, and only these, on its own connections.
 */
export function storeSql(visible: readonly string[] = []) {
  return {
    meta: META_SQL,
    bumpRevision: BUMP_REVISION_SQL,
    list: listSql(visible),
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
    return `SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where(conditions)} ORDER BY id LIMIT ${placeholder(limit)}`;
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

// The schema's shared pieces, in the dialect's types.

/** Migration 1's check of the ship date: only its shape, up to the seconds (migration 2 made it the contract's rule). */
export function firstShipDateShape({ dateTime }: Dialect): string {
  return `order_ship_date_shape CHECK (length(ship_date) BETWEEN 19 AND 64 AND ${dateTime.glob('ship_date', '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*')})`;
}

/** Migration 2's precondition, in every store: no row may break the contract's rule for a ship date. */
export function shipDateRefusal(dialect: Dialect): MigrationPrecondition {
  return { rule: SHIP_DATE_RULE, violationsSql: `SELECT id FROM orders WHERE NOT ${shipDateRule('ship_date', dialect)} ORDER BY id` };
}

/** The ship date's CHECK since migration 2: the contract's rule (./date-time-sql.ts). */
export function shipDateCheck(dialect: Dialect): string {
  return `order_ship_date_rfc3339 CHECK ${shipDateRule('ship_date', dialect)}`;
}

/** The table of applied migrations. */
export function schemaMigrationsSql({ ddl }: Dialect): string {
  return `CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )${ddl.tableOptions}`;
}

/**
 * The `orders` table under `name`, in the dialect's types: the same columns and constraints in
 * every store; `shipDate` is the ship date's CHECK (its CONSTRAINT clause), and `shipAt` the ship
 * instant's column (absent before migration 3).
 */
export function ordersTableSql({ ddl }: Dialect, name: string, shipDate: string, shipAt?: string): string {
  const integer = (column: string, constraint: string, range: string): string =>
    `${column.padEnd(12)} ${ddl.integer} NOT NULL CONSTRAINT ${constraint} CHECK (${column} BETWEEN ${range})`;
  const safe = `-${SAFE_INTEGER_SQL} AND ${SAFE_INTEGER_SQL}`;
  return `CREATE TABLE ${name} (
        ${integer('id', 'order_id_safe', safe).replace(' NOT NULL', ' PRIMARY KEY')},
        ${integer('pet_id', 'order_pet_id_safe', safe)},
        ${integer('quantity', 'order_quantity_range', `1 AND ${SAFE_INTEGER_SQL}`)},
        ship_date    TEXT    NOT NULL CONSTRAINT ${shipDate},
        complete     ${ddl.boolean('complete')},
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status IN ('pending', 'shipped', 'cancelled')),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,${shipAt === undefined ? '' : `\n        ship_at      ${shipAt},`}
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      )${ddl.tableOptions}`;
}

/** The store_meta and api_keys tables of migration 1. */
export function metaAndKeysSql({ ddl }: Dialect): string {
  return `
      -- One row: a random id for this database, and a counter bumped by every write that changes
      -- what listOrders returns. Together they make the list's ETag, the same in every instance.
      CREATE TABLE store_meta (
        one      INTEGER PRIMARY KEY CHECK (one = 1),
        store_id TEXT    NOT NULL,
        revision ${ddl.integer.padEnd(7)} NOT NULL
      )${ddl.tableOptions};
      INSERT INTO store_meta (one, store_id, revision) VALUES (1, ${ddl.randomId}, 0);

      CREATE TABLE api_keys (
        id         ${ddl.serial} PRIMARY KEY,
        name       TEXT NOT NULL CONSTRAINT api_keys_name_unique UNIQUE,
        key_hash   TEXT NOT NULL CONSTRAINT api_keys_hash_unique UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      )${ddl.tableOptions};`;
}

/**
 * The change feed's table, in the dialect's types, its position columns first (`position`: how
 * the dialect orders events, and its key). Each event's status is the order's after the change:
 * order.cancelled leaves none to show.
 */
export function orderEventsTableSql({ ddl }: Dialect, position: string): string {
  return `CREATE TABLE order_events (
        ${position},
        type        TEXT    NOT NULL
                            CONSTRAINT order_event_type_known CHECK (type IN ('order.created', 'order.shipped', 'order.cancelled')),
        order_id    ${ddl.integer.padEnd(7)} NOT NULL,
        status      TEXT    CONSTRAINT order_event_status CHECK ((type = 'order.cancelled') = (status IS NULL)),
        occurred_at TEXT    NOT NULL
      )${ddl.tableOptions}`;
}

/**
 * The indexes that serve a page of any filter combination (pageQuery) in id order: orders_page by
 * status and complete, then id for the keyset, then the ship instant, so that a shipDate range is
 * tested in the index without reading the rows it excludes; orders_page_by_pet by pet, then id.
 * The pet index is kept narrow on purpose: its inserts land all over it (pets are not in id
 * order), and an import builds it under the write lock: with the other filters in it as well, a
 * 1,000,000-order import held the lock 5.2 s instead of 2 s. A pet's orders are few, so its page
 * tests the other filters on them. Cancelled orders are never listed, so neither index holds them.
 */
export const PAGE_INDEXES_SQL = `
      CREATE INDEX orders_page ON orders (status, complete, id, ship_at) WHERE status <> 'cancelled';
      CREATE INDEX orders_page_by_pet ON orders (pet_id, id) WHERE status <> 'cancelled';`;
