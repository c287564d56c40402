import path from 'node:path';
import Database from 'better-sqlite3';
import { openPostgresStore, openSqliteStore, type Store } from '../../src/store';
import { DATE_TIME_DIGITS, instantKeySql, shipDateRule } from '../../src/store/date-time-sql';
import { postgresDialect } from '../../src/store/postgres/dialect';
import { freshDatabase, sql } from './postgres';
import { rowsOf, tempDir } from './store';

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
      await sql(
        url,
        `TRUNCATE orders, api_keys, order_events;
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
export function storeKinds(): StoreKind[] {
  return process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? [sqliteKind(), postgresKind()] : [sqliteKind()];
}
