import type { CancelOutcome, OrderRecord, OrderSnapshot, OrderStatus, ShipOutcome } from './types';

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
