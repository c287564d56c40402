import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore, openSqliteStore, type OrderEventRecord, type Store } from '../../src/store';
import { MIGRATIONS as PG_MIGRATIONS, migrate as migratePostgres } from '../../src/store/postgres/migrations';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations';
import { freshDatabase } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';

// The migration that gives events their own `complete` copies, for every event written before it,
// its order's: before it no change of an order altered `complete`, so that is what each showed.
// After it, an order shipped later keeps its order.created event as it was.
const tmp = tempDir();
afterAll(tmp.cleanup);

/** Two orders and their order.created events, as a store one migration older wrote them. */
const ORDERS = `INSERT INTO orders (id, pet_id, quantity, ship_date, ship_at, complete, status, created_at) VALUES
  (1, 7, 1, '2026-12-01T10:00:00Z', 1796119200, FALSE, 'pending', '2026-11-01T00:00:00Z'),
  (2, 8, 2, '2026-12-02T10:00:00Z', 1796205600, TRUE, 'pending', '2026-11-01T00:00:00Z')`;
const EVENTS = `INSERT INTO order_events (type, order_id, status, occurred_at) VALUES
  ('order.created', 1, 'pending', '2026-11-01T00:00:00Z'), ('order.created', 2, 'pending', '2026-11-01T00:00:00Z')`;

/** The migrations before the one this suite is about: a store one migration older than it. */
const before = <M extends { name: string }>(migrations: readonly M[]): M[] =>
  migrations.slice(
    0,
    migrations.findIndex((migration) => migration.name === 'events keep the complete they showed'),
  );

/** The orders their events show, after both have shipped. */
async function shownAfterShipping(store: Store): Promise<unknown[]> {
  await store.shipOrder(1);
  await store.shipOrder(2);
  // PostgreSQL holds a committed event back while any older writing transaction of the server is
  // open, in any database (another suite's import, under load): the read waits for the ships'
  // events to be shown, as long as that transaction runs.
  let events: OrderEventRecord[] = [];
  await until(async () => (events = (await store.readEvents('oldest', 10)).events).length === WANT.length, 'both ships shown', 120_000);
  return events.map((event) => [event.type, event.orderId, event.order?.complete]);
}

const WANT = [
  ['order.created', 1, false],
  ['order.created', 2, true],
  ['order.shipped', 1, true],
  ['order.shipped', 2, true],
];

test('SQLite: events written before the migration keep the complete they showed, and a ship does not change them', async () => {
  const file = path.join(tmp.dir, 'older.db');
  const raw = new Database(file);
  migrate(raw, before(MIGRATIONS));
  raw.exec(ORDERS.replaceAll('FALSE', '0').replaceAll('TRUE', '1'));
  raw.exec(EVENTS);
  raw.close();

  const store = openSqliteStore(file);
  try {
    expect(await shownAfterShipping(store)).toEqual(WANT);
  } finally {
    await store.close();
  }
});

const onPostgres = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? test : test.skip;

onPostgres(
  'PostgreSQL: events written before the migration keep the complete they showed, and a ship does not change them',
  async () => {
    const database = await freshDatabase();
    try {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await migratePostgres(client as unknown as pg.PoolClient, before(PG_MIGRATIONS));
      await client.query(ORDERS);
      await client.query(EVENTS);
      await client.end();

      const store = await openPostgresStore(database.url);
      try {
        expect(await shownAfterShipping(store)).toEqual(WANT);
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  },
  180_000,
);
