import pg from 'pg';
import type { ImportRecord } from '../../../src/store';
import { migrate as migratePostgres } from '../../../src/store/postgres/migrations';
import { importIntoPostgres } from '../../../src/store/postgres/import';
import { freshDatabase, sql } from '../../helpers/postgres';
import { order } from '../../helpers/stores';

// PostgreSQL's import moves records with an id into the orders a chunk at a time, as the file is
// read, each chunk checked first. These tests make chunks of three records, so that what one
// chunk moved meets what a later one holds; tests/orders/import.test.ts holds both stores to the same
// errors on files within one chunk.
const pgTest = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? describe : describe.skip;

pgTest('PostgreSQL import, chunk by chunk', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let client: pg.Client;
  beforeEach(async () => {
    database = await freshDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await migratePostgres(client as unknown as pg.PoolClient);
  });
  afterEach(async () => {
    await client.end();
    await database.drop();
  });

  const NOW = '2026-11-25T08:00:00.000Z';
  const importChunked = (records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>) =>
    importIntoPostgres(client as unknown as pg.PoolClient, records, NOW, { chunkRecords: 3 });
  const withIds = (ids: Array<number | undefined>) => ids.map((id) => order(id === undefined ? {} : { id }));
  const ids = async () => (await sql<{ id: number }>(database.url, 'SELECT id FROM orders ORDER BY id')).map((row) => row.id);
  /** The records, then an error where the file could not give the next one. */
  async function* breaksOff(records: ImportRecord[], error: Error): AsyncGenerator<ImportRecord> {
    yield* records;
    throw error;
  }

  test('every record goes in, with ids given after the largest, and its order.created events in file order', async () => {
    await importChunked(withIds([1]));

    const count = await importChunked(withIds([20, 21, undefined, 22, 5, 23, undefined, 24]));

    expect(count).toBe(8);
    expect(await ids()).toEqual([1, 5, 20, 21, 22, 23, 24, 25, 26]);
    const events = await sql<{ order_id: number; status: string; occurred_at: string }>(
      database.url,
      'SELECT order_id, status, occurred_at FROM order_events ORDER BY xid, seq',
    );
    expect(events.map((e) => e.order_id)).toEqual([1, 20, 21, 22, 5, 23, 24, 25, 26]);
    expect(new Set(events.slice(1).map((e) => `${e.status} ${e.occurred_at}`))).toEqual(new Set([`pending ${NOW}`]));
  });

  test('an id that repeats one a moved chunk held names both records, and nothing is written', async () => {
    await expect(importChunked(withIds([1, 2, 3, 4, 5, 6, 7, 2, 8]))).rejects.toMatchObject({
      message: 'id 2 repeats the id of record 1',
      index: 7,
    });
    expect(await ids()).toEqual([]);
  });

  test('a taken id, then a repeat chunks later: the repeat is the error, as on SQLite', async () => {
    await importChunked(withIds([100]));

    const attempt = importChunked(withIds([1, 2, 3, 100, 4, 5, 6, 7, 8, 9, 1]));

    await expect(attempt).rejects.toMatchObject({ index: 10, conflict: { kind: 'repeated_id', id: 1, first: 0 } });
    expect(await ids()).toEqual([100]);
  });

  test('a taken id in a later chunk, below ids already moved, names its record', async () => {
    await importChunked(withIds([50]));

    const attempt = importChunked(withIds([60, 61, 62, 10, 11, 12, 13, 50, 14]));

    await expect(attempt).rejects.toMatchObject({ index: 7, conflict: { kind: 'id_taken', id: 50 } });
    expect(await ids()).toEqual([50]);
  });

  test('ids below those of the orders that no order has go in, in any chunk', async () => {
    await importChunked(withIds([50, 40]));

    await importChunked(withIds([60, 61, 62, 10, 11, 12, 41, 49, 51]));

    expect(await ids()).toEqual([10, 11, 12, 40, 41, 49, 50, 51, 60, 61, 62]);
  });

  test('a record the file cannot give after chunks have moved writes nothing', async () => {
    const attempt = importChunked(breaksOff(withIds([1, 2, 3, 4, 5, 6, 7]), new Error('the file is not valid JSON')));

    await expect(attempt).rejects.toThrow('the file is not valid JSON');
    expect(await ids()).toEqual([]);
    expect(await sql(database.url, 'SELECT * FROM order_events')).toEqual([]);
  });

  test('a taken id, then a record the file cannot give: the unreadable record is the error, as on SQLite', async () => {
    await importChunked(withIds([5]));

    const attempt = importChunked(breaksOff(withIds([1, 2, 3, 5, 6, 7, 8]), new Error('record 7: the file is not valid JSON')));

    await expect(attempt).rejects.toThrow('record 7: the file is not valid JSON');
    expect(await ids()).toEqual([5]);
  });

  test('a record the store refuses in a later chunk fails the import with the refusal, and writes nothing', async () => {
    const records = withIds([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    records[4] = order({ id: 5, shipDate: '2026-02-30T10:00:00Z' });

    await expect(importChunked(records)).rejects.toThrow(/order_ship_date_rfc3339/);
    expect(await ids()).toEqual([]);
  });

  test('a repeat, then a record the file cannot give: the repeat is the error', async () => {
    const attempt = importChunked(breaksOff(withIds([1, 2, 3, 4, 5, 2, 6]), new Error('the file is not valid JSON')));

    await expect(attempt).rejects.toMatchObject({ index: 5, conflict: { kind: 'repeated_id', id: 2, first: 1 } });
  });

  test("orders imported in id order fill the paged index's pages, shipped ones among them", async () => {
    // Every seventh shipped, as a store's history has them: pending orders, the new ones, are
    // appended at orders_page's end, and only the shipped ones go into its middle.
    const records = Array.from({ length: 20_000 }, (_, i) =>
      order({ id: i + 1, ...((i + 1) % 7 === 0 ? { status: 'shipped', complete: true } : {}) }),
    );
    await importIntoPostgres(client as unknown as pg.PoolClient, records, NOW);

    await client.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
    const density = async (index: string) => {
      const [row] = (await client.query<{ d: number }>('SELECT avg_leaf_density AS d FROM pgstatindex($1)', [index])).rows;
      return Number(row?.d);
    };
    // Each full page split in halves once pending orders went into the middle: 53% here.
    expect(await density('orders_page')).toBeGreaterThan(75);
    expect(await density('orders_pkey')).toBeGreaterThan(85);
  });
});
