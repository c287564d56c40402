import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { MigrationRefusedError, openPostgresStore, openSqliteStore } from '../../src/store';
import { MIGRATIONS as PG_MIGRATIONS, migrate as migratePostgres } from '../../src/store/postgres/migrations';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations';
import { cli } from '../helpers/cli';
import { freshDatabase, sql } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';

// Migration 2 holds shipDate to the contract. A store that already holds rows breaking that rule
// (written by an older release's looser check) refuses it, names the rows, and changes nothing.
const tmp = tempDir();
afterAll(tmp.cleanup);

/** One good order, then twelve whose shipDate the contract refuses but the first schema let in. */
const BAD = ['2026-13-45T99:99:99Z', '2026-11-20T10:00:00', '2026-02-30T10:00:00Z'];
const ROWS = [
  { id: 1, shipDate: '2026-12-01T10:00:00Z' },
  ...Array.from({ length: 12 }, (_, i) => ({ id: 100 + i, shipDate: BAD[i % 3]! })),
];
const NAMED = 'ids 100, 101, 102, 103, 104, 105, 106, 107, 108, 109 and 2 more';
const INSERT = `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at) VALUES`;

test('SQLite: a store with rows the new rule refuses stays at schema 1, unchanged, and the error names the rows', () => {
  const file = path.join(tmp.dir, 'legacy.db');
  const raw = new Database(file);
  migrate(raw, MIGRATIONS.slice(0, 1));
  const insert = raw.prepare(`${INSERT} (?, 1, 1, ?, 0, 'pending', '2026-01-01T00:00:00Z')`);
  for (const { id, shipDate } of ROWS) insert.run(id, shipDate);
  const state = () => ({
    schema: raw.prepare("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY name").all(),
    versions: raw.prepare('SELECT version FROM schema_migrations').pluck().all(),
    rows: raw.prepare('SELECT * FROM orders ORDER BY id').all(),
  });
  const before = state();

  let refusal: unknown;
  try {
    openSqliteStore(file);
  } catch (err) {
    refusal = err;
  }
  const served = cli(['--db', file, 'serve', '--port', '0']);

  expect(refusal).toBeInstanceOf(MigrationRefusedError);
  expect((refusal as MigrationRefusedError).ids).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
  expect((refusal as MigrationRefusedError).count).toBe(12);
  expect((refusal as Error).message).toContain(
    `12 orders break its rule that shipDate must be an RFC 3339 date-time with a time zone, on a real calendar day: ${NAMED}. Nothing was changed.`,
  );
  expect(state()).toEqual(before);
  expect(served.status).toBe(1);
  expect(served.stderr).toContain(NAMED);

  // The fix the README gives: correct (or remove) the named rows, then start again.
  raw.prepare("UPDATE orders SET ship_date = '2026-11-20T10:00:00Z' WHERE id >= 100").run();
  raw.close();
  const store = openSqliteStore(file);
  void store.close();
  const fixed = new Database(file, { readonly: true });
  expect(fixed.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(MIGRATIONS.at(-1)!.version);
  expect(fixed.prepare('SELECT count(*) FROM orders').pluck().get()).toBe(13);
  fixed.close();
});

const onPostgres = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? test : test.skip;

onPostgres('PostgreSQL: a store with rows the new rule refuses stays at schema 1, unchanged, and the error names the rows', async () => {
  const database = await freshDatabase();
  try {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await migratePostgres(client as unknown as pg.PoolClient, PG_MIGRATIONS.slice(0, 1));
    for (const { id, shipDate } of ROWS)
      await client.query(`${INSERT} ($1, 1, 1, $2, false, 'pending', '2026-01-01T00:00:00Z')`, [id, shipDate]);
    const state = async () => ({
      constraints: (
        await client.query(
          "SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'orders'::regclass ORDER BY conname",
        )
      ).rows,
      versions: (await client.query('SELECT version FROM schema_migrations')).rows,
      rows: (await client.query('SELECT * FROM orders ORDER BY id')).rows,
    });
    const before = await state();

    const refusal = await openPostgresStore(database.url).then(
      (store) => store.close(),
      (err: unknown) => err,
    );

    expect(refusal).toBeInstanceOf(MigrationRefusedError);
    expect((refusal as MigrationRefusedError).ids).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
    expect((refusal as Error).message).toContain(
      `12 orders break its rule that shipDate must be an RFC 3339 date-time with a time zone, on a real calendar day: ${NAMED}. Nothing was changed.`,
    );
    expect(await state()).toEqual(before);

    await client.query("UPDATE orders SET ship_date = '2026-11-20T10:00:00Z' WHERE id >= 100");
    await client.end();
    await (await openPostgresStore(database.url)).close();
    expect(await sql<{ v: number }>(database.url, 'SELECT max(version) AS v FROM schema_migrations')).toEqual([
      { v: PG_MIGRATIONS.at(-1)!.version },
    ]);
  } finally {
    await database.drop();
  }
});
