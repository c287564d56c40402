import { randomBytes } from 'node:crypto';
import { isoNow } from '../date-time';
import { StoreInvariantError } from './errors';
import type { ImportRecord, ImportRecords, ListedOrder, OrderRecord, OrderSnapshot } from './types';
import type { ListedRow, OrderRow } from './sql';

// What every store does the same way, apart from its SQL (./sql.ts): the mapping of rows to
// records, the list's ETag and first-page prefetch, the cursor secret, an import's batches. Each
// guarantee's algorithm has a file of its own: ./keys.ts, ./rates.ts, ./moves.ts, ./placement.ts.

/** The time every write records, as the stores write it. */
export const timestamp = isoNow;

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

/** A text column that may be NULL, of a row of `table`: its text, or null. */
export function textOrNull(value: unknown, table: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new StoreInvariantError(`a row of ${table} holds something other than text where text belongs`);
  return value;
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
