import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore, openSqliteStore } from '../../src/store';
import { shipDateRule } from '../../src/store/date-time-sql';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/store/postgres/migrations';
import { MIGRATIONS } from '../../src/store/sqlite/migrations';
import { sqliteDialect } from '../../src/store/sqlite/dialect';
import { freshDatabase, sql } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';
import { ROOT } from '../helpers/project';

// A store made by the release before this one has the ship date rule in its first text, a 60-line
// nest of CASE and substr. Opening it with this release gives it the readable rule, with every row
// and index as it was, and the same schema as a store made today.
const tmp = tempDir();
afterAll(tmp.cleanup);
const fixture = (name: string): string => fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', name), 'utf8');

/** The orders as the store holds them, every column. */
const ORDERS = 'SELECT * FROM orders ORDER BY id';

function sqliteSchema(file: string): { orders: string; indexes: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare<[], { type: string; sql: string }>(
        `SELECT type, sql FROM sqlite_schema WHERE tbl_name = 'orders' AND sql IS NOT NULL ORDER BY name`,
      )
      .all();
    return {
      orders: rows.find((row) => row.type === 'table')!.sql,
      indexes: rows.filter((row) => row.type === 'index').map((row) => row.sql),
    };
  } finally {
    db.close();
  }
}

test('SQLite: a store of the last release gets the readable rule, keeps every row, and ends with the schema of a new store', async () => {
  const old = path.join(tmp.dir, 'old.db');
  const before = new Database(old);
  before.exec(fixture('sqlite-schema-4.sql'));
  const rows = before.prepare(ORDERS).all();
  const oldCheck = before.prepare<[], string>(`SELECT sql FROM sqlite_schema WHERE name = 'orders'`).pluck().get()!;
  before.close();
  expect(oldCheck.length).toBeGreaterThan(9000);

  const store = openSqliteStore(old);
  const listed = await store.snapshotOrders();
  expect((await listed.read(10)).map((order) => order.id)).toEqual([1, 2, 4]);
  await listed.close();
  await store.close();

  const after = new Database(old, { readonly: true });
  expect(after.prepare(ORDERS).all()).toEqual(rows);
  expect(after.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(MIGRATIONS.at(-1)!.version);
  after.close();

  const fresh = path.join(tmp.dir, 'fresh.db');
  await openSqliteStore(fresh).close();
  const upgraded = sqliteSchema(old);
  expect(upgraded).toEqual(sqliteSchema(fresh));
  expect(upgraded.orders).toContain(`CONSTRAINT order_ship_date_rfc3339 CHECK ${shipDateRule('ship_date', sqliteDialect)}`);
  // What a DBA sees fits on one screen.
  expect(upgraded.orders.split('\n').length).toBeLessThanOrEqual(40);
  expect(upgraded.orders.length).toBeLessThan(oldCheck.length / 2);
  expect(upgraded.indexes.join('\n')).toMatch(/orders_page .*orders_page_by_pet/s);

  // And the rule holds: a day that does not exist is refused under the constraint's name.
  const db = new Database(old);
  expect(() =>
    db
      .prepare(
        `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, ship_at) VALUES (9, 1, 1, '2026-02-30T10:00:00Z', 0, 'pending', 'x', 'x')`,
      )
      .run(),
  ).toThrow(/CHECK constraint failed: order_ship_date_rfc3339/);
  db.close();
});

const onPostgres = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? test : test.skip;

onPostgres(
  'PostgreSQL: a store of the last release gets the readable rule, keeps every row, and ends with the schema of a new store',
  async () => {
    const [old, fresh] = [await freshDatabase(), await freshDatabase()];
    try {
      // The dump empties search_path for its own session: a connection of its own.
      const loader = new pg.Client({ connectionString: old.url });
      await loader.connect();
      await loader.query(fixture('postgres-schema-3.sql'));
      await loader.end();
      const rows = await sql(old.url, ORDERS);
      const checkOf = async (url: string): Promise<string> =>
        (
          await sql<{ def: string }>(
            url,
            `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'order_ship_date_rfc3339'`,
          )
        )[0]!.def;
      expect((await checkOf(old.url)).length).toBeGreaterThan(4000);

      await (await openPostgresStore(old.url)).close();
      await (await openPostgresStore(fresh.url)).close();

      expect(await sql(old.url, ORDERS)).toEqual(rows);
      expect(await sql<{ v: number }>(old.url, 'SELECT max(version) AS v FROM schema_migrations')).toEqual([
        { v: PG_MIGRATIONS.at(-1)!.version },
      ]);
      expect(await checkOf(old.url)).toBe(await checkOf(fresh.url));
      // PostgreSQL keeps the rule as it parsed it, not as it was written; tests/store/date-time-check.test.ts compares its verdicts.
      expect((await checkOf(old.url)).length).toBeLessThan(4000);
      await expect(
        sql(
          old.url,
          `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, created_at, ship_at) VALUES (9, 1, 1, '2026-02-30T10:00:00Z', false, 'x', 'x')`,
        ),
      ).rejects.toThrow(/order_ship_date_rfc3339/);
    } finally {
      await old.drop();
      await fresh.drop();
    }
  },
);
