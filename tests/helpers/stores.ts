import path from 'node:path';
import Database from 'better-sqlite3';
import type { StoreKind } from '../../src/config';
import { loadServedDocuments } from '../../src/contract/document';
import { scopesOf } from '../../src/contract/scopes';
import { generateKey, hashKey } from '../../src/keys';
import { parsePolicies } from '../../src/rate-policy';
import {
  openPostgresStore,
  openSqliteStore,
  type KeyPolicies,
  type ImportRecord,
  type ListedOrder,
  type OrderRecord,
  type Store,
} from '../../src/store';
import { DATE_TIME_DIGITS, instantKeySql, shipDateRule } from '../../src/store/date-time-sql';
import { postgresDialect } from '../../src/store/postgres/dialect';
import { freshDatabase, sql } from './postgres';
import { tempDir } from './temp-dir';

// The one way a test gets a store: eachStore runs a suite once per kind (SQLite, and PostgreSQL
// when it answers), each test with a fresh store; freshStore opens one SQLite store, for the suites
// about SQLite alone. Both open it the same way (sqliteTestStore, postgresKind).

/** An order row as a second writer (a data fix, a legacy migration) would insert it. */
export interface RawOrderRow {
  id: number;
  petId: number;
  quantity: number;
  shipDate: string;
  complete: boolean;
}

/** An order row as stored, read around the service. */
export interface StoredRow {
  id: number;
  status: string;
  cancelled_at: string | null;
  shipped_at: string | null;
}

/** A fresh, empty store for one test, and a way to read its rows directly. */
export interface TestStore {
  store: Store;
  rows: () => Promise<StoredRow[]>;
  /** Opens another store on the same data: a second instance, as another server process would. */
  another: () => Promise<Store>;
  /** What a CLI or a server process needs to reach the same data: `--db FILE` or the URL. */
  cliArgs: string[];
  env: NodeJS.ProcessEnv;
  /**
   * Inserts a pending order around the service, as a second writer would. With `checksOff` the
   * writer gets past the shipDate check first (SQLite's ignore_check_constraints switches every
   * CHECK off; on PostgreSQL that constraint is dropped and put back NOT VALID), as an old
   * release or a careless fix could have.
   */
  insertRow: (row: RawOrderRow, options?: { checksOff?: boolean }) => Promise<void>;
}

const INSERT_ROW = `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at)`;

let counter = 0;

/** A new SQLite file's path under `dir`. */
function nextFile(dir: string): string {
  counter += 1;
  return path.join(dir, `store-${counter}.db`);
}

/** A fresh SQLite store in `file`, with what the suites need to reach its data around the service. */
function sqliteTestStore(file: string): TestStore {
  return {
    store: openSqliteStore(file),
    another: async () => openSqliteStore(file),
    rows: async () => rowsOf(file),
    cliArgs: ['--db', file],
    env: {},
    insertRow: async (row, options = {}) => {
      const db = new Database(file);
      try {
        if (options.checksOff) db.pragma('ignore_check_constraints = ON');
        // ship_at, which the store writes beside every ship date, as the store's own SQL computes it.
        db.prepare(
          `${INSERT_ROW.replace(')', ', ship_at)')} SELECT ?, ?, ?, v, ?, 'pending', ?, ${instantKeySql('v')} FROM (SELECT ? AS v)`,
        ).run(row.id, row.petId, row.quantity, row.complete ? 1 : 0, new Date().toISOString(), row.shipDate);
      } finally {
        db.close();
      }
    },
  };
}

/** A fresh SQLite store in a new file under `dir`, for a suite about SQLite alone. */
export function freshStore(dir: string): { store: Store; file: string } {
  const file = nextFile(dir);
  return { store: sqliteTestStore(file).store, file };
}

/** One kind of store the suites run against, named as the service names it (config.ts). */
export interface TestStoreKind {
  readonly name: StoreKind;
  /** Call in beforeAll: prepares a place for this file's stores. */
  setUp(): Promise<void>;
  /** A fresh empty store; the previous one from this kind must be closed first. */
  open(): Promise<TestStore>;
  /** Call in afterAll: removes everything setUp made. */
  tearDown(): Promise<void>;
}

function sqliteKind(): TestStoreKind {
  let tmp: ReturnType<typeof tempDir> | undefined;
  return {
    name: 'sqlite',
    setUp: async () => {
      tmp = tempDir();
    },
    open: async () => {
      if (tmp === undefined) throw new Error('the SQLite kind is opened before its setUp');
      return sqliteTestStore(nextFile(tmp.dir));
    },
    tearDown: async () => tmp?.cleanup(),
  };
}

function postgresKind(): TestStoreKind {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  return {
    name: 'postgres',
    // One database per test file, created and dropped here; emptied before every test.
    setUp: async () => {
      database = await freshDatabase();
    },
    open: async () => {
      const { url } = database!;
      const store = await openPostgresStore(url, { poolSize: 4 });
      await sql(
        url,
        `TRUNCATE orders, api_keys, order_events, key_usage, idempotency_keys, webhook_endpoints, webhook_retries, webhook_attempts;
         UPDATE store_meta SET revision = 0, store_id = substr(md5(random()::text), 1, 16), events_pruned_xid = '0', events_pruned_seq = 0`,
      );
      return {
        store,
        another: () => openPostgresStore(url, { poolSize: 4 }),
        rows: () => sql<StoredRow>(url, 'SELECT id, status, cancelled_at, shipped_at FROM orders ORDER BY id'),
        cliArgs: [],
        env: { PETSTORE_DATABASE_URL: url },
        insertRow: async (row, options = {}) => {
          // ship_at, which the store writes beside every ship date, as the store's own SQL computes it;
          // a ship date the checks would refuse has none the store could write.
          const shipAt = `COALESCE(CASE WHEN v ~ '${DATE_TIME_DIGITS}' THEN ${instantKeySql('v')} END, '')`;
          const insert = `${INSERT_ROW.replace(')', ', ship_at)')} SELECT $1, $2, $3, v, $5, 'pending', $6, ${shipAt} FROM (SELECT $4::text AS v) AS given`;
          const values = [row.id, row.petId, row.quantity, row.shipDate, row.complete, new Date().toISOString()];
          if (!options.checksOff) {
            await sql(url, insert, values);
            return;
          }
          // Dropped for the insert, then put back NOT VALID: later rows are checked, this one is not.
          await sql(url, 'ALTER TABLE orders DROP CONSTRAINT order_ship_date_rfc3339');
          await sql(url, insert, values);
          await sql(
            url,
            `ALTER TABLE orders ADD CONSTRAINT order_ship_date_rfc3339 CHECK ${shipDateRule('ship_date', postgresDialect)} NOT VALID`,
          );
        },
      };
    },
    tearDown: async () => database?.drop(),
  };
}

/** The stores the parameterised suites run against: SQLite always, PostgreSQL when it answers. */
export function storeKinds(): TestStoreKind[] {
  return process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? [sqliteKind(), postgresKind()] : [sqliteKind()];
}

/** What every test of a store suite gets: a fresh, empty store with one key. */
export interface StoreSuite {
  readonly kind: TestStoreKind;
  readonly store: Store;
  /** The store as the test helpers see it: its rows read around the service, its CLI arguments. */
  readonly fresh: TestStore;
  readonly rows: () => Promise<StoredRow[]>;
  /** A valid key (named "suite"), and the Authorization header that carries it. */
  readonly key: string;
  readonly auth: { Authorization: string };
}

/**
 * Runs `suite` once per store kind (SQLite, and PostgreSQL when it answers), each test with a
 * fresh, empty store holding one key, closed after the test. The one place this set-up lives.
 */
export function eachStore(suite: (s: StoreSuite) => void): void {
  describe.each(storeKinds())('$name store', (kind) => {
    let current: TestStore | undefined;
    let key = '';
    beforeAll(() => kind.setUp());
    afterAll(() => kind.tearDown());
    beforeEach(async () => {
      current = await kind.open();
      key = await addKey(current.store, 'suite');
    });
    afterEach(() => current?.store.close());

    const fresh = (): TestStore => {
      if (current === undefined) throw new Error('the store suite is used outside a test');
      return current;
    };
    suite({
      kind,
      get store() {
        return fresh().store;
      },
      get fresh() {
        return fresh();
      },
      rows: () => fresh().rows(),
      get key() {
        return key;
      },
      get auth() {
        return { Authorization: `Bearer ${key}` };
      },
    });
  });
}

/** Every scope the served documents declare: what a test's key may do unless the test says otherwise. */
const EVERY_SCOPE = scopesOf(loadServedDocuments());

/** Creates an API key in the store, with every scope unless `scopes` are given, and returns the key itself. */
export async function addKey(store: Store, name = 'tester', scopes: readonly string[] = EVERY_SCOPE): Promise<string> {
  const key = generateKey();
  await store.createKey(name, hashKey(key), { scopes });
  return key;
}

/** A valid order record, with overrides. */
export function order(overrides: Partial<ImportRecord> = {}): ImportRecord {
  return { petId: 10, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false, ...overrides };
}

/** The raw order rows of a database file, read around the service, for asserting what was written. */
export function rowsOf(
  file: string,
): Array<{ id: number; status: string; complete: number; cancelled_at: string | null; shipped_at: string | null }> {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT id, status, complete, cancelled_at, shipped_at FROM orders ORDER BY id').all() as never;
  } finally {
    db.close();
  }
}

/** Every order the store lists, each with its status (the list does not read it): read one by one. */
export async function recordsOf(store: Store): Promise<OrderRecord[]> {
  const records: OrderRecord[] = [];
  for (const { id } of await listAll(store)) {
    const record = await store.getOrder(id);
    if (record === undefined) throw new Error(`order ${id} of the list is gone`);
    records.push(record);
  }
  return records;
}

/** Every order a snapshot of the store lists, read in small chunks. */
export async function listAll(store: Store): Promise<ListedOrder[]> {
  const snapshot = await store.snapshotOrders();
  const all: ListedOrder[] = [];
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

/** A key's policies as `--rate-limit` writes them (`5/h,2/day`, `none`), or null for the deployment's. */
export function policies(text: string | null): KeyPolicies {
  return text === null ? null : parsePolicies('rate limit', text.split(','));
}
