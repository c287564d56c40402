import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { instantKey } from '../../contract/date-time';
import { importBatches } from '../core';
import { drive } from '../dialect';
import { publishSteps, type PublishSql } from '../publish';
import { ImportConflictError, type ImportRecords } from '../types';
import { postgresConnection } from './dialect';

const IMPORT_LOCK = 0x70657473696d7074n; // "petsimpt": one import publishes at a time

/**
 * Imports records in one transaction on one connection: streamed into a temporary table with COPY
 * (so memory stays bounded, whatever the file's size), then moved into `orders` at once.
 * Records with an id go in first; records without one then get the next ids after the largest,
 * in file order. Any failure rolls everything back. The same rules and messages as SQLite's.
 */
export async function importIntoPostgres(
  client: PoolClient,
  records: ImportRecords,
  now: string,
  // Only the bench turns the events off, to measure what they cost (scripts/bench/baselines/import-without-events.ts).
  { events = true }: { events?: boolean } = {},
): Promise<number> {
  await client.query('BEGIN');
  try {
    // The pool's statement timeout bounds a request's statements; the COPY lasts as long as the
    // file streams in, and the move is one statement over every record. Lifted for this
    // transaction only: an import ends with its file, or with the process that runs it.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query(`CREATE TEMP TABLE import_staging (
      idx       BIGINT PRIMARY KEY,
      id        BIGINT,
      pet_id    BIGINT  NOT NULL,
      quantity  BIGINT  NOT NULL,
      ship_date TEXT    NOT NULL,
      complete  BOOLEAN NOT NULL,
      status    TEXT    NOT NULL,
      ship_at   TEXT    NOT NULL
    ) ON COMMIT DROP`);
    const count = await stage(client, records);
    const imported = await publish(client, count, now, events);
    await client.query('COMMIT');
    return imported;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Characters of COPY's text format flushed to the server at a time. */
const COPY_CHUNK = 64 * 1024;

/**
 * Streams the records into the staging table with one `COPY … FROM STDIN` (pg-copy-streams), the
 * bulk path PostgreSQL has, waiting for the server whenever the stream says it is full, so memory
 * stays bounded. Repeated ids are found once everything is staged, in one pass; the first record
 * that repeats an earlier one's id is the error, as the SQLite store reports it. A record the file
 * could not give ends the COPY with what came before it, so that an earlier repeat is still the
 * error reported first.
 */
async function stage(client: PoolClient, records: ImportRecords): Promise<number> {
  const copy = client.query(copyFrom('COPY import_staging (idx, id, pet_id, quantity, ship_date, complete, status, ship_at) FROM STDIN'));
  const copied = finished(copy);
  // Until the COPY is awaited, a failure of the stream would otherwise be an unhandled rejection.
  copied.catch(() => undefined);
  let chunk = '';
  let staged = 0;
  const flush = async (): Promise<void> => {
    // A COPY the server refused (a row it rejects, a lost connection) fails here, with its error.
    if (copy.errored) await copied;
    const full = !copy.write(chunk);
    chunk = '';
    if (full) await Promise.race([once(copy, 'drain'), copied]);
  };
  // What reading the records threw (the file, its JSON, a record the contract refuses): thrown as
  // it is once the COPY has ended.
  let unreadable: { error: unknown } | undefined;
  try {
    for await (const batch of importBatches(records)) {
      for (const record of batch) {
        chunk += `${staged}\t${record.id ?? '\\N'}\t${record.petId}\t${record.quantity}\t${copyText(record.shipDate)}\t${record.complete ? 't' : 'f'}\t${copyText(record.status ?? 'pending')}\t${instantKey(record.shipDate)}\n`;
        staged += 1;
      }
      if (chunk.length >= COPY_CHUNK) await flush();
    }
  } catch (err) {
    unreadable = { error: err };
  }
  if (chunk !== '') await flush();
  copy.end();
  await copied;
  await checkRepeats(client);
  if (unreadable !== undefined) throw unreadable.error;
  return staged;
}

/** A value in COPY's text format: the characters it gives a meaning to, escaped. */
function copyText(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!);
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Fails on the first staged record whose id repeats an earlier record's. */
async function checkRepeats(client: PoolClient): Promise<void> {
  const { rows } = await client.query<{ idx: number; id: number; first: number }>(
    `SELECT idx, id, first FROM (
       SELECT idx, id, min(idx) OVER (PARTITION BY id) AS first FROM import_staging WHERE id IS NOT NULL
     ) s
     WHERE idx <> first ORDER BY idx LIMIT 1`,
  );
  const repeat = rows[0];
  if (repeat) throw new ImportConflictError(repeat.idx, { kind: 'repeated_id', id: repeat.id, first: repeat.first });
}

/** The publish's statements (publishSteps, in ../publish.ts) on the staging table; `now` is the import's time. */
function publishSql(now: string, events: boolean): PublishSql {
  const withCreatedEvents = events ? withEvents : (move: string) => move;
  const columns = 'pet_id, quantity, ship_date, complete, status, created_at, shipped_at, ship_at';
  const values = `pet_id, quantity, ship_date, complete, status, $1, CASE status WHEN 'shipped' THEN $1 END, ship_at`;
  return {
    firstTaken: { text: 'SELECT s.idx, s.id FROM import_staging s JOIN orders o ON o.id = s.id ORDER BY s.idx LIMIT 1', values: [] },
    largestId: {
      text: 'SELECT max(id) AS id FROM (SELECT max(id) AS id FROM orders UNION ALL SELECT max(id) FROM import_staging) ids',
      values: [],
    },
    unassignable: (offset) => ({
      text: 'SELECT idx FROM import_staging WHERE id IS NULL ORDER BY idx OFFSET $1 LIMIT 1',
      values: [offset],
    }),
    moveWithIds: {
      text: withCreatedEvents(
        `INSERT INTO orders (id, ${columns}) SELECT id, ${values} FROM import_staging WHERE id IS NOT NULL ORDER BY idx`,
      ),
      values: [now],
    },
    moveWithoutIds: (largest) => ({
      text: withCreatedEvents(`INSERT INTO orders (id, ${columns})
             SELECT $2::bigint + row_number() OVER (ORDER BY idx), ${values} FROM import_staging WHERE id IS NULL`),
      values: [now, largest],
    }),
  };
}

/** A move into `orders` that also writes each moved order's order.created event, set-wise, at the time `$1`. */
function withEvents(move: string): string {
  return `WITH moved AS (${move} RETURNING id, status)
    INSERT INTO order_events (type, order_id, status, occurred_at) SELECT 'order.created', id, status, $1 FROM moved`;
}

/** Publishes the staged records, one import at a time (the advisory lock), in the import's transaction. */
async function publish(client: PoolClient, count: number, now: string, events: boolean): Promise<number> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK.toString()]);
  return drive(publishSteps(publishSql(now, events), count), postgresConnection(client));
}
