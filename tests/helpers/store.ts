import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { generateKey, hashKey } from '../../src/keys';
import { openSqliteStore, type ImportRecord, type OrderRecord, type Store } from '../../src/store';

/** A temporary directory for one test file, removed by `cleanup`. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-test-'));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

let counter = 0;

/** A fresh SQLite store in a new file under `dir`. */
export function freshStore(dir: string): { store: Store; file: string } {
  counter += 1;
  const file = path.join(dir, `store-${counter}.db`);
  return { store: openSqliteStore(file), file };
}

/** Creates an API key in the store and returns the key itself. */
export async function addKey(store: Store, name = 'tester'): Promise<string> {
  const key = generateKey();
  await store.createKey(name, hashKey(key));
  return key;
}

/** A valid order record, with overrides. */
export function order(overrides: Partial<ImportRecord> = {}): ImportRecord {
  return { petId: 10, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false, ...overrides };
}

/** The raw order rows of a database file, read around the service, for asserting what was written. */
export function rowsOf(file: string): Array<{ id: number; status: string; cancelled_at: string | null; shipped_at: string | null }> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT id, status, cancelled_at, shipped_at FROM orders ORDER BY id').all() as never;
  } finally {
    db.close();
  }
}

/** Every order a snapshot of the store lists, read in small chunks. */
export async function listAll(store: Store): Promise<OrderRecord[]> {
  const snapshot = await store.snapshotOrders();
  const all: OrderRecord[] = [];
  try {
    for (let chunk = await snapshot.read(7); chunk.length > 0; chunk = await snapshot.read(7)) all.push(...chunk);
  } finally {
    await snapshot.close();
  }
  return all;
}

/** The store with some methods replaced, for tests that inject a fault into a real store. */
export function withOverrides(store: Store, overrides: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, property: keyof Store) {
      const value: unknown = overrides[property] ?? Reflect.get(target, property);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(overrides[property] ? overrides : target)
        : value;
    },
  });
}

/**
 * Gives every test of a file a fresh SQLite store under `dir` with a key and `records` imported,
 * handed to `use` before the test, and closes it after.
 */
export function freshStorePerTest(dir: string, records: ImportRecord[], use: (made: { store: Store; key: string }) => void): void {
  let store: Store | undefined;
  beforeEach(async () => {
    ({ store } = freshStore(dir));
    const key = await addKey(store);
    await store.importOrders(records);
    use({ store, key });
  });
  afterEach(() => store?.close());
}
