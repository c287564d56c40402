import type { PoolClient } from 'pg';
import { BUMP_REVISION_SQL } from '../shared';
import { ImportConflictError, type ImportRecord } from '../types';

const BATCH = 1000;
const IMPORT_LOCK = 0x70657473696d7074n; // "petsimpt": one import publishes at a time

/**
 * Imports records in one transaction on one connection: staged batch by batch into a temporary
 * table (so memory stays bounded, whatever the file's size), then moved into `orders` at once.
 * Records with an id go in first; records without one then get the next ids after the largest,
 * in file order. Any failure rolls everything back. The same rules and messages as SQLite's.
 */
export async function importIntoPostgres(
  client: PoolClient,
  records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>,
  now: string,
): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query(`CREATE TEMP TABLE import_staging (
      idx       BIGINT PRIMARY KEY,
      id        BIGINT,
      pet_id    BIGINT  NOT NULL,
      quantity  BIGINT  NOT NULL,
      ship_date TEXT    NOT NULL,
      complete  BOOLEAN NOT NULL,
      status    TEXT    NOT NULL
    ) ON COMMIT DROP`);
    await client.query('CREATE INDEX ON import_staging (id)');
    const count = await stage(client, records);
    const imported = await publish(client, count, now);
    await client.query('COMMIT');
    return imported;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

async function stage(client: PoolClient, records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>): Promise<number> {
  let batch: ImportRecord[] = [];
  let staged = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await checkRepeats(client, batch, staged);
    await client.query(
      `INSERT INTO import_staging (idx, id, pet_id, quantity, ship_date, complete, status)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::boolean[], $7::text[])`,
      [
        batch.map((_, i) => staged + i),
        batch.map((r) => r.id ?? null),
        batch.map((r) => r.petId),
        batch.map((r) => r.quantity),
        batch.map((r) => r.shipDate),
        batch.map((r) => r.complete),
        batch.map((r) => r.status ?? 'pending'),
      ],
    );
    staged += batch.length;
    batch = [];
  };
  try {
    for await (const record of records) {
      batch.push(record);
      if (batch.length >= BATCH) await flush();
    }
  } catch (err) {
    // A record the file could not give (malformed or invalid): an earlier repeated id, if any,
    // is reported first, as it would have been had the batch been staged record by record.
    await flush();
    throw err;
  }
  await flush();
  return staged;
}

/** Fails on the first record of the batch whose id repeats an earlier record's. */
async function checkRepeats(client: PoolClient, batch: ImportRecord[], offset: number): Promise<void> {
  const firstIndex = new Map<number, number>();
  let repeat: { index: number; id: number; first: number } | undefined;
  batch.forEach((record, i) => {
    if (record.id === undefined || repeat) return;
    const first = firstIndex.get(record.id);
    if (first !== undefined) repeat = { index: offset + i, id: record.id, first };
    else firstIndex.set(record.id, offset + i);
  });
  const ids = [...firstIndex.keys()];
  if (ids.length > 0) {
    const { rows } = await client.query<{ idx: number; id: number }>(
      'SELECT idx, id FROM import_staging WHERE id = ANY($1::bigint[]) ORDER BY idx',
      [ids],
    );
    for (const row of rows) {
      const index = firstIndex.get(row.id)!;
      if (!repeat || index < repeat.index) repeat = { index, id: row.id, first: row.idx };
    }
  }
  if (repeat) throw new ImportConflictError(repeat.index, 'id', `id ${repeat.id} repeats the id of record ${repeat.first}`);
}

async function publish(client: PoolClient, count: number, now: string): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK.toString()]);
  const clash = await client.query<{ idx: number; id: number }>(
    'SELECT s.idx, s.id FROM import_staging s JOIN orders o ON o.id = s.id ORDER BY s.idx LIMIT 1',
  );
  const first = clash.rows[0];
  if (first) throw new ImportConflictError(first.idx, 'id', `id ${first.id} is already taken by an existing order`);
  await client.query(
    `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at)
     SELECT id, pet_id, quantity, ship_date, complete, status, $1, CASE status WHEN 'shipped' THEN $1 END
     FROM import_staging WHERE id IS NOT NULL ORDER BY idx`,
    [now],
  );
  const { rows } = await client.query<{ id: number | null }>('SELECT max(id) AS id FROM orders');
  const largest = rows[0]?.id ?? 0;
  const free = Number.MAX_SAFE_INTEGER - largest;
  const unassigned = await client.query<{ idx: number }>('SELECT idx FROM import_staging WHERE id IS NULL ORDER BY idx OFFSET $1 LIMIT 1', [
    free,
  ]);
  if (unassigned.rows[0]) {
    throw new ImportConflictError(unassigned.rows[0].idx, 'id', 'id cannot be assigned: no larger id is free; give this record an id');
  }
  await client.query(
    `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at)
     SELECT $2::bigint + row_number() OVER (ORDER BY idx), pet_id, quantity, ship_date, complete, status, $1,
            CASE status WHEN 'shipped' THEN $1 END
     FROM import_staging WHERE id IS NULL`,
    [now, largest],
  );
  if (count > 0) await client.query(BUMP_REVISION_SQL);
  return count;
}
