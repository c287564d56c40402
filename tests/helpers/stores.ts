import path from 'node:path';
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store';
import { freshDatabase, sql } from './postgres';
import { rowsOf, tempDir } from './store';

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
  rows(): Promise<StoredRow[]>;
  /** What a CLI or a server process needs to reach the same data: `--db FILE` or the URL. */
  cliArgs: string[];
  env: NodeJS.ProcessEnv;
}

/** One kind of store the parameterised suites run against. */
export interface StoreKind {
  readonly name: 'sqlite' | 'postgres';
  /** Call in beforeAll: prepares a place for this file's stores. */
  setUp(): Promise<void>;
  /** A fresh empty store; the previous one from this kind must be closed first. */
  open(): Promise<TestStore>;
  /** Call in afterAll: removes everything setUp made. */
  tearDown(): Promise<void>;
}

let counter = 0;

function sqliteKind(): StoreKind {
  let tmp: ReturnType<typeof tempDir> | undefined;
  return {
    name: 'sqlite',
    setUp: async () => {
      tmp = tempDir();
    },
    open: async () => {
      counter += 1;
      const file = path.join(tmp!.dir, `store-${counter}.db`);
      return { store: openSqliteStore(file), rows: async () => rowsOf(file), cliArgs: ['--db', file], env: {} };
    },
    tearDown: async () => tmp?.cleanup(),
  };
}

function postgresKind(): StoreKind {
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
      await sql(url, "TRUNCATE orders, api_keys; UPDATE store_meta SET revision = 0, store_id = substr(md5(random()::text), 1, 16)");
      return {
        store,
        rows: () => sql<StoredRow>(url, 'SELECT id, status, cancelled_at, shipped_at FROM orders ORDER BY id'),
        cliArgs: [],
        env: { PETSTORE_DATABASE_URL: url },
      };
    },
    tearDown: async () => database?.drop(),
  };
}

/** The stores the parameterised suites run against: SQLite always, PostgreSQL when it answers. */
export function storeKinds(): StoreKind[] {
  return process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? [sqliteKind(), postgresKind()] : [sqliteKind()];
}
