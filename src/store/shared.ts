import { randomBytes } from 'node:crypto';
import type { CancelOutcome, OrderRecord, OrderSnapshot, OrderStatus, PageRequest, ShipOutcome } from './types';

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

/** The list's weak ETag: the database's random id and its revision. */
export function etagOf(meta: { store_id: string; revision: number }): string {
  return `W/"${meta.store_id}-${meta.revision}"`;
}

/** A snapshot already read whole, for a list that fit in the first page. */
export function snapshotOf(etag: string, orders: OrderRecord[]): OrderSnapshot {
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
    if (Number(n) !== expected) throw new Error(`placeholders must be $1, $2, … once each, in order: ${sql}`);
    expected += 1;
    return '?';
  });
}

/**
 * The indexes that serve a page of any filter combination (pageQuery) by reading only the index
 * entries of its branches' pages: every equality filter a branch has (status and complete always,
 * pet_id when asked), then id for the keyset, then the ship instant, so that a shipDate range is
 * tested in the index without reading rows it excludes. Cancelled orders are never listed, so
 * neither index holds them.
 */
export const PAGE_INDEXES_SQL = `
      CREATE INDEX orders_page ON orders (status, complete, id, ship_at) WHERE status <> 'cancelled';
      CREATE INDEX orders_page_by_pet ON orders (pet_id, status, complete, id, ship_at) WHERE status <> 'cancelled';`;

/**
 * The SQL of one page, the same for both stores (PostgreSQL's placeholders; SQLite takes it
 * through sqlitePlaceholders). An index orders by id only below its equality columns, so a
 * filtered page is the union of one branch per (status, complete) pair the filter allows, each
 * read in id order from orders_page or orders_page_by_pet and cut at `limit`, then merged: at most
 * four branches of at most `limit` rows, however many orders the store holds. An unfiltered page
 * reads the id order itself, skipping only cancelled orders.
 */
export function pageQuery({ filter, after, limit }: PageRequest): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const placeholder = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const { status, petId, complete, shipFrom, shipTo } = filter;
  if (status === undefined && petId === undefined && complete === undefined && shipFrom === undefined && shipTo === undefined) {
    // No filter: the orders not cancelled, in id order, as v1's list reads them; one branch.
    const keyset = placeholder(after ?? BEFORE_FIRST_ID);
    return {
      text: `SELECT ${ORDER_COLUMNS} FROM orders WHERE status <> 'cancelled' AND id > ${keyset} ORDER BY id LIMIT ${placeholder(limit)}`,
      values,
    };
  }
  const statuses = filter.status === undefined ? (['pending', 'shipped'] as const) : [filter.status];
  const completes = filter.complete === undefined ? [false, true] : [filter.complete];
  const branches: string[] = [];
  for (const status of statuses) {
    for (const complete of completes) {
      const where = [`status <> 'cancelled'`, `status = '${status}'`, `complete = ${complete ? 'TRUE' : 'FALSE'}`];
      if (filter.petId !== undefined) where.push(`pet_id = ${placeholder(filter.petId)}`);
      if (filter.shipFrom !== undefined) where.push(`ship_at >= ${placeholder(filter.shipFrom)}`);
      if (filter.shipTo !== undefined) where.push(`ship_at < ${placeholder(filter.shipTo)}`);
      if (after !== undefined) where.push(`id > ${placeholder(after)}`);
      branches.push(`SELECT ${ORDER_COLUMNS} FROM orders WHERE ${where.join(' AND ')} ORDER BY id LIMIT ${placeholder(limit)}`);
    }
  }
  if (branches.length === 1) return { text: branches[0]!, values };
  const union = branches.map((branch, i) => `SELECT * FROM (${branch}) AS b${i}`).join(' UNION ALL ');
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
  if (secret == null) throw new Error('the store has no cursor secret');
  return Buffer.from(secret, 'hex');
}
