import { randomBytes } from 'node:crypto';
import {
  StoreInvariantError,
  type CancelOutcome,
  type OrderRecord,
  type OrderSnapshot,
  type OrderStatus,
  type PageRequest,
  type ShipOutcome,
} from './types';

/** What the stores' shipDate constraint requires, in the words of a migration's refusal. */
export const SHIP_DATE_RULE = 'shipDate must be an RFC 3339 date-time with a time zone, on a real calendar day';

/** The largest id, pet id and quantity either store accepts: JavaScript's safe-integer bound. */
export const SAFE_INTEGER_SQL = String(Number.MAX_SAFE_INTEGER);

/**
 * An orders row as the list queries return it in array mode: id, pet_id, quantity, ship_date,
 * complete (0 or 1), status. Arrays skip building an object per row, a third of the cost of a page.
 */
export type OrderRow = [id: number, petId: number, quantity: number, shipDate: string, complete: number, status: OrderStatus];

/** The one mapping from a stored row to the store's order record. */
export function rowToRecord([id, petId, quantity, shipDate, complete, status]: OrderRow): OrderRecord {
  return { id, petId, quantity, shipDate, complete: complete === 1, status };
}

/** Reads the store id and revision that make the list's ETag. */
export const META_SQL = 'SELECT store_id, revision FROM store_meta';

/** Bumps the revision; run in the same transaction as every write that changes the list. */
export const BUMP_REVISION_SQL = 'UPDATE store_meta SET revision = revision + 1';

/** The list's weak ETag: the database's random id and its revision, from store_meta's one row. */
export function etagOf(meta: { store_id: string; revision: number } | undefined): string {
  if (meta === undefined) throw new StoreInvariantError('store_meta has no row: the schema was not migrated');
  return `W/"${meta.store_id}-${meta.revision}"`;
}

/**
 * The first-page prefetch, in every store: most lists fit in one read of `prefetch + 1` rows, and
 * such a list is the whole snapshot, read already (the store then gives its connection back at
 * once). Undefined when the first read did not hold the whole list.
 */
export function prefetched(etag: string, first: readonly OrderRow[], prefetch: number): OrderSnapshot | undefined {
  return first.length <= prefetch ? snapshotOf(etag, first.map(rowToRecord)) : undefined;
}

/** A snapshot already read whole, for a list that fit in the first page. */
function snapshotOf(etag: string, orders: OrderRecord[]): OrderSnapshot {
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

/**
 * The move of a pending order to cancelled or shipped, with its timestamp, in every store: one
 * conditional update, so that of concurrent moves of one order exactly one happens. `$1` is the
 * time, `$2` the id; `visible`, the store's conditions on the orders it may touch (SQLite's PUBLISHED).
 */
export function movePendingSql(to: 'cancelled' | 'shipped', visible: readonly string[] = []): string {
  const where = ['id = $2', `status = 'pending'`, ...visible].join(' AND ');
  return `UPDATE orders SET status = '${to}', ${to === 'cancelled' ? 'cancelled_at' : 'shipped_at'} = $1 WHERE ${where}`;
}

/**
 * What a cancel answers, in every store: `moved` when the conditional move from pending
 * happened; otherwise the order's status then (none: there is no such order). A cancelled order is
 * gone, as one that never existed.
 */
export function cancelOutcome(moved: boolean, status: OrderStatus | null | undefined): CancelOutcome {
  if (moved) return 'cancelled';
  return status === 'shipped' ? 'shipped' : 'not_found';
}

/** What a ship answers, in every store, from the same two facts as cancelOutcome. */
export function shipOutcome(moved: boolean, status: OrderStatus | null | undefined): ShipOutcome {
  if (moved) return 'shipped';
  if (status === 'shipped') return 'already_shipped';
  return status === 'cancelled' ? 'cancelled' : 'not_found';
}

/**
 * The API-key statements, the same in both stores. Written with PostgreSQL's placeholders; SQLite
 * takes them through sqlitePlaceholders.
 */
export const KEY_SQL = {
  create: 'INSERT INTO api_keys (name, key_hash, created_at) VALUES ($1, $2, $3)',
  list: 'SELECT name, created_at AS "createdAt", revoked_at AS "revokedAt" FROM api_keys ORDER BY id',
  revoke: 'UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
  findActive: 'SELECT name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
} as const;

/**
 * A statement with PostgreSQL's `$1, $2, …` as SQLite's positional `?`: only for statements that
 * use each placeholder once, in order (better-sqlite3 binds `?` by position), which it checks.
 */
export function sqlitePlaceholders(sql: string): string {
  let expected = 1;
  return sql.replace(/\$(\d+)/g, (_match, n: string) => {
    if (Number(n) !== expected) throw new StoreInvariantError(`placeholders must be $1, $2, … once each, in order: ${sql}`);
    expected += 1;
    return '?';
  });
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

/**
 * The SQL of one page, the same for both stores (PostgreSQL's placeholders; SQLite takes it
 * through sqlitePlaceholders). Unfiltered, a page reads the id order itself, skipping only
 * cancelled orders; for one pet, that pet's orders in id order (orders_page_by_pet). Otherwise an
 * index orders by id only below its equality columns, so the page is the union of one branch per
 * (status, complete) pair the filter allows, each read in id order from orders_page and cut at
 * `limit`, then merged: at most four branches of at most `limit` rows, however many orders the
 * store holds. `visible` are the store's conditions on the orders it may show (SQLite's PUBLISHED).
 */
export function pageQuery({ filter, after, limit }: PageRequest, visible: readonly string[] = []): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const placeholder = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const { status, petId, complete, shipFrom, shipTo } = filter;
  /** One branch: the orders not cancelled that meet `equal` and the ship range, after the keyset, in id order. */
  const branch = (equal: string[], keyset: number | undefined): string => {
    const where = [`status <> 'cancelled'`, ...visible, ...equal];
    if (shipFrom !== undefined) where.push(`ship_at >= ${placeholder(shipFrom)}`);
    if (shipTo !== undefined) where.push(`ship_at < ${placeholder(shipTo)}`);
    if (keyset !== undefined) where.push(`id > ${placeholder(keyset)}`);
    return `SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where.join(' AND ')} ORDER BY id LIMIT ${placeholder(limit)}`;
  };
  const statusIs = (value: string): string => `status = '${value}'`;
  const completeIs = (value: boolean): string => `complete = ${value ? 'TRUE' : 'FALSE'}`;
  const unfiltered = status === undefined && complete === undefined && shipFrom === undefined && shipTo === undefined;
  if (petId !== undefined || unfiltered) {
    const equal = petId === undefined ? [] : [`pet_id = ${placeholder(petId)}`];
    if (status !== undefined) equal.push(statusIs(status));
    if (complete !== undefined) equal.push(completeIs(complete));
    // The keyset always, so that each store reads its index from a key, never from the start of the table.
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

/** Below every id, for the first page of a keyset read. */
export const BEFORE_FIRST_ID = -Number.MAX_SAFE_INTEGER - 1;

/** The columns of an OrderRow, in its order. */
export const ORDER_COLUMNS = 'id, pet_id, quantity, ship_date, CASE WHEN complete THEN 1 ELSE 0 END AS complete, status';

/**
 * The store's cursor secret, made on first use the same way in every store: read it; if there is
 * none yet, offer a random one, which sticks only if no other process set one first; read again.
 */
export async function cursorSecretOf(query: (sql: string, value?: string) => Promise<string | null | undefined>): Promise<Buffer> {
  const read = 'SELECT cursor_secret FROM store_meta';
  let secret = await query(read);
  if (secret == null) {
    await query('UPDATE store_meta SET cursor_secret = $1 WHERE cursor_secret IS NULL', randomBytes(32).toString('hex'));
    secret = await query(read);
  }
  if (secret == null) throw new StoreInvariantError('the store has no cursor secret');
  return Buffer.from(secret, 'hex');
}
