import { randomBytes } from 'node:crypto';
import { instantKey } from '../date-time';
import { DuplicateKeyNameError, StoreInvariantError } from './errors';
import {
  type CancelOutcome,
  type ImportRecord,
  type ImportRecords,
  type KeyChanges,
  type KeyInfo,
  type ListedOrder,
  type NewKey,
  type RateCount,
  type OrderRecord,
  type OrderSnapshot,
  type OrderStatus,
  type ShipOutcome,
  type NewOrder,
  type PlaceOutcome,
} from './types';
import type { Dialect } from './dialect';
import { rateWindowsOf, type ListedRow, type OrderRow } from './sql';
import { andThen, type MaybePromise } from '../maybe-promise';

// What every store does the same way, apart from its SQL (./sql.ts): the mapping of rows to
// records, the list's ETag and first-page prefetch, the outcomes of a move, the cursor secret, an import's batches.

/** The time every write records, as the stores write it. */
export const timestamp = (): string => new Date().toISOString();

/** The one mapping from a stored row to the store's order record (`complete` is 0 or 1 in SQLite, a boolean in PostgreSQL). */
export function rowToRecord([id, petId, quantity, shipDate, complete, status]: OrderRow): OrderRecord {
  return { id, petId, quantity, shipDate, complete: isComplete(complete), status };
}

/** A row of the list's snapshot as the order it lists. */
export function rowToListed([id, petId, quantity, shipDate, complete]: ListedRow): ListedOrder {
  return { id, petId, quantity, shipDate, complete: isComplete(complete) };
}

/** A stored `complete`, as the boolean it is: 0 or 1 in SQLite, a boolean in PostgreSQL. */
function isComplete(stored: number | boolean): boolean {
  return stored === 1 || stored === true;
}

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
export function prefetched(etag: string, first: readonly ListedRow[], prefetch: number): OrderSnapshot | undefined {
  return first.length <= prefetch ? snapshotOf(etag, first.map(rowToListed)) : undefined;
}

/** A snapshot already read whole, for a list that fit in the first page. */
function snapshotOf(etag: string, orders: ListedOrder[]): OrderSnapshot {
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
 * What a key may do when it is made without scopes, and what the migration gave every key made
 * before keys had scopes: all that any key could do then. A scope added later is granted only when named.
 */
export const DEFAULT_SCOPES: readonly string[] = ['orders:read', 'orders:cancel'];

/** A key's scopes as stored: separated by spaces, as OAuth 2 writes a scope list (RFC 6749 §3.3). */
const storedScopes = (scopes: readonly string[]): string => scopes.join(' ');

/** The values of KEY_SQL.create for a new key, its creation time `at`. */
export function newKeyValues(name: string, keyHash: string, at: string, key: NewKey): unknown[] {
  return [name, keyHash, at, key.expiresAt ?? null, storedScopes(key.scopes ?? DEFAULT_SCOPES), key.rateLimit ?? null];
}

/** The values of KEY_SQL.update for the changes `changes` gives. */
export function keyUpdateValues(name: string, changes: KeyChanges): unknown[] {
  const expires = changes.expiresAt !== undefined;
  const limits = changes.rateLimit !== undefined;
  return [
    expires ? 1 : 0,
    expires ? changes.expiresAt : null,
    changes.scopes === undefined ? null : storedScopes(changes.scopes),
    limits ? 1 : 0,
    limits ? changes.rateLimit : null,
    name,
  ];
}

/** A row of KEY_SQL.list as operators see it. */
export function keyInfoOf(row: Omit<KeyInfo, 'scopes'> & { scopes: string }): KeyInfo {
  return { ...row, scopes: row.scopes.split(' ').filter((scope) => scope !== '') };
}

/**
 * What counting a request found, the same in every store: admitted, with the windows its count
 * answered (rateSql's `count`); else refused, with the windows as `read` answers them then: at
 * once when `read` answers at once.
 */
export function rateCountOf(
  keyName: string,
  counted: Record<string, unknown> | undefined,
  read: () => Record<string, unknown> | undefined,
): RateCount;
export function rateCountOf(
  keyName: string,
  counted: Record<string, unknown> | undefined,
  read: () => MaybePromise<Record<string, unknown> | undefined>,
): MaybePromise<RateCount>;
export function rateCountOf(
  keyName: string,
  counted: Record<string, unknown> | undefined,
  read: () => MaybePromise<Record<string, unknown> | undefined>,
): MaybePromise<RateCount> {
  if (counted !== undefined) return { admitted: true, windows: rateWindowsOf(counted) };
  return andThen(read(), (row) => {
    if (row === undefined) throw new StoreInvariantError(`the count of key "${keyName}" refused a request but has no row`);
    return { admitted: false, windows: rateWindowsOf(row) };
  });
}

/** What creating a key raised, as the store reports it: a taken name is DuplicateKeyNameError, anything else as it is. */
export function keyCreationError(err: unknown, name: string, dialect: Dialect): unknown {
  return dialect.uniqueViolation(err) === 'api_keys.name' ? new DuplicateKeyNameError(`a key named "${name}" already exists`) : err;
}

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

/** The records of an import a batch at a time, however they come. */
export async function* importBatches(records: ImportRecords): AsyncGenerator<readonly ImportRecord[]> {
  if (Array.isArray(records)) {
    yield records;
    return;
  }
  for await (const item of records) yield Array.isArray(item) ? item : [item];
}

/**
 * What a kept Idempotency-Key record says to a placement with `fingerprint`: the first answer
 * again, or that the key was used with another body.
 */
export function keptOutcome(record: { fingerprint: string; answer: string }, fingerprint: string): PlaceOutcome {
  return record.fingerprint === fingerprint ? { outcome: 'replayed', answer: record.answer } : { outcome: 'reused' };
}

/**
 * A placed order's values after its id, as PLACEMENT_SQL.order takes them: pet, quantity, ship date,
 * ship instant, the time `at`, and `complete` false as the store writes it.
 */
export function placedOrderValues(order: NewOrder, at: string, notComplete: 0 | false): unknown[] {
  return [order.petId, order.quantity, order.shipDate, instantKey(order.shipDate), at, notComplete];
}

/** The record a placement of `order` under id `id` made: pending and not complete. */
export function placedRecord(id: number, order: NewOrder): OrderRecord {
  return { id, petId: order.petId, quantity: order.quantity, shipDate: order.shipDate, complete: false, status: 'pending' };
}
