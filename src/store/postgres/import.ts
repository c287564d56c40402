import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { instantKey } from '../../date-time';
import { importBatches } from '../core';
import { drive, statement } from '../dialect';
import { numberedPublishSteps, throwReportedFault, type NumberingSql } from '../publish';
import { ImportConflictError, StoreInvariantError } from '../errors';
import { EVENT_WRITE_COLUMNS, createdEventsSql } from '../events';
import { IMPORTED_COLUMNS, RECORD_COLUMNS, importedTimes } from '../sql';
import type { ImportRecord, ImportRecords } from '../types';
import { postgresConnection } from './dialect';

const IMPORT_LOCK = 0x70657473696d7074n; // "petsimpt": one import publishes at a time

/** Records per chunk: what the import holds in memory is this chunk's COPY text and the next one's. */
const CHUNK_RECORDS = 20_000;

/**
 * Imports records in one transaction on one connection, in bounded memory whatever the file's size.
 * Records with an id go straight into `orders` with COPY, the bulk path PostgreSQL has, a chunk at
 * a time while the next chunk is read, each chunk checked first: no id taken, none repeated.
 * Records without one wait in a temporary table, then get the next ids after the largest, in file
 * order. Each chunk's ids are kept, so that once a chunk fails its check the import reports the
 * same error, for the same record, as the SQLite store: the first repeated id, else a record the
 * file could not give, else the first taken id. Any failure rolls everything back.
 */
export async function importIntoPostgres(
  client: PoolClient,
  records: ImportRecords,
  now: string,
  // Only the bench turns the events off, to measure what they cost (scripts/bench/baselines/import-without-events.ts),
  // and only tests make the chunks small.
  { events = true, chunkRecords = CHUNK_RECORDS }: { events?: boolean; chunkRecords?: number } = {},
): Promise<number> {
  await client.query('BEGIN');
  try {
    // The pool's statement timeout bounds a request's statements; a COPY lasts as long as its part
    // of the file takes to read. Lifted for this transaction only: an import ends with its file,
    // or with the process that runs it.
    await client.query('SET LOCAL statement_timeout = 0');
    // One import at a time, from its first chunk on: a chunk's check trusts that no other import
    // adds an order until this one commits.
    await client.query('SELECT pg_advisory_xact_lock($1)', [IMPORT_LOCK.toString()]);
    await client.query(`CREATE TEMP TABLE import_ids (
      first BIGINT   PRIMARY KEY,
      ids   BIGINT[] NOT NULL
    ) ON COMMIT DROP`);
    // A chunk's ids are read back only when a chunk fails its check: kept as they come, not
    // compressed, which took a twentieth of the server's time in an import of 1,000,000 orders.
    await client.query('ALTER TABLE import_ids ALTER COLUMN ids SET STORAGE EXTERNAL');
    await client.query(`CREATE TEMP TABLE import_unnumbered (
      idx       BIGINT  PRIMARY KEY,
      pet_id    BIGINT  NOT NULL,
      quantity  BIGINT  NOT NULL,
      ship_date TEXT    NOT NULL,
      complete  BOOLEAN NOT NULL,
      status    TEXT    NOT NULL,
      ship_at   TEXT    NOT NULL
    ) ON COMMIT DROP`);
    const count = await load(client, records, copyText(now), { events, chunkRecords });
    const imported = await drive(numberedPublishSteps(numberingSql(now, events), count), postgresConnection(client));
    await client.query('COMMIT');
    return imported;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Each record's place in the file and its id (NULL without one), from the chunks' arrays. */
const FILE_IDS = 'SELECT first + n - 1 AS idx, id FROM import_ids, unnest(ids) WITH ORDINALITY AS u(id, n)';

/**
 * Reads every record, a chunk at a time: keeps the chunk's ids (import_ids), its records without an
 * id (import_unnumbered), and, while every chunk has passed its check, moves its records with an
 * id into `orders`, with their order.created events. Once a chunk fails its check nothing more
 * moves, and the error is found from the ids kept. Answers how many records the file had.
 */
async function load(
  client: PoolClient,
  records: ImportRecords,
  now: string,
  { events, chunkRecords }: { events: boolean; chunkRecords: number },
): Promise<number> {
  // The largest id of the orders, as it grows with the chunks moved: a chunk whose ids are all
  // above it, none repeated, needs no look at the orders.
  const { rows } = await client.query<{ id: string | null }>('SELECT max(id) AS id FROM orders');
  let ceiling = rows[0]?.id == null ? Number.NEGATIVE_INFINITY : Number(rows[0].id);
  // The place of the first record of the first chunk that failed its check; undefined while none has.
  let failedFrom: number | undefined;
  const write = async (chunk: Chunk): Promise<void> => {
    const ids = chunk.idsArray();
    await client.query('INSERT INTO import_ids (first, ids) VALUES ($1, $2)', [chunk.first, ids]);
    await copyIn(client, `COPY import_unnumbered (idx, ${RECORD_COLUMNS}) FROM STDIN`, chunk.unnumbered);
    if (failedFrom !== undefined || chunk.orders.empty) return;
    if (chunk.repeats() || (chunk.smallest <= ceiling && (await anyTaken(client, ids)))) {
      failedFrom = chunk.first;
      return;
    }
    await copyIn(client, `COPY orders (id, ${IMPORTED_COLUMNS}) FROM STDIN`, chunk.orders);
    if (events) await copyIn(client, `COPY order_events (${EVENT_WRITE_COLUMNS}) FROM STDIN`, chunk.events);
    ceiling = Math.max(ceiling, chunk.largest);
  };

  // Two chunks take turns: one is written while the next is read into the other, which the chunk
  // before wrote from. The chunk being written is awaited, with its failure, before the next is.
  const chunks = [new Chunk(), new Chunk()] as const;
  let chunk = chunks[0].start(0);
  let count = 0;
  let writing: Promise<void> = Promise.resolve();
  const handOver = async (): Promise<void> => {
    await writing;
    writing = write(chunk);
    writing.catch(() => undefined);
    chunk = (chunk === chunks[0] ? chunks[1] : chunks[0]).start(count);
  };
  // What reading the records threw (the file, its JSON, a record the contract refuses): thrown as
  // it is once what came before it is kept, unless an earlier repeated id is the error.
  // A chunk the server refused is not that: its error is thrown as it is.
  let unreadable: { error: unknown } | undefined;
  const batches = importBatches(records);
  try {
    for (;;) {
      let next: IteratorResult<readonly ImportRecord[]>;
      try {
        next = await batches.next();
      } catch (err) {
        unreadable = { error: err };
        break;
      }
      if (next.done === true) break;
      for (const record of next.value) {
        chunk.add(count, record, now);
        count += 1;
      }
      if (count - chunk.first >= chunkRecords) await handOver();
    }
    if (count > chunk.first) await handOver();
    await writing;
  } finally {
    await batches.return(undefined);
  }
  if (failedFrom === undefined && unreadable === undefined) return count;

  const repeat = await first<{ idx: string; id: string; first: string }>(
    client,
    `SELECT idx, id, first FROM (SELECT idx, id, min(idx) OVER (PARTITION BY id) AS first FROM (${FILE_IDS}) f WHERE id IS NOT NULL) s
     WHERE idx <> first ORDER BY idx LIMIT 1`,
  );
  await throwReportedFault({
    repeat:
      repeat && new ImportConflictError(Number(repeat.idx), { kind: 'repeated_id', id: Number(repeat.id), first: Number(repeat.first) }),
    unreadable,
    // No id repeats, so every record before the failed chunk went in, and any from it on whose id an
    // order has met an order that was there before the import.
    taken: async () => {
      const taken = await first<{ idx: string; id: string }>(
        client,
        `SELECT f.idx, f.id FROM (${FILE_IDS}) f JOIN orders o ON o.id = f.id WHERE f.idx >= $1 ORDER BY f.idx LIMIT 1`,
        [failedFrom],
      );
      return taken && new ImportConflictError(Number(taken.idx), { kind: 'id_taken', id: Number(taken.id) });
    },
  });
  throw new StoreInvariantError(`the import's chunk from record ${failedFrom} failed its check, and none of its records conflicts`);
}

/**
 * One chunk of the file: what is kept of it, and COPY's text for each table it goes to. The text
 * goes into buffers that the chunk after next writes over, so that what the import holds stays
 * the same size however long the file, and each record's strings are garbage at once.
 */
class Chunk {
  /** The file's place of the chunk's first record. */
  first = 0;
  /** The records without an id (import_unnumbered). */
  readonly unnumbered = new CopyText();
  /** The records with an id, as orders and as their order.created events. */
  readonly orders = new CopyText();
  readonly events = new CopyText();
  smallest = Number.POSITIVE_INFINITY;
  largest = Number.NEGATIVE_INFINITY;
  /** Every record's id, NaN for a record without one, in file order from `first`. */
  #ids = new Float64Array(1024);
  #count = 0;
  /** Whether each id is larger than the one before it: then none repeats. */
  #rising = true;

  /** Empties the chunk for the records from the file's place `first` on. */
  start(first: number): this {
    this.first = first;
    for (const text of [this.unnumbered, this.orders, this.events]) text.clear();
    this.smallest = Number.POSITIVE_INFINITY;
    this.largest = Number.NEGATIVE_INFINITY;
    this.#count = 0;
    this.#rising = true;
    return this;
  }

  add(idx: number, record: ImportRecord, now: string): void {
    const status = copyText(record.status ?? 'pending');
    const staged = `${record.petId}\t${record.quantity}\t${copyText(record.shipDate)}\t${record.complete ? 't' : 'f'}\t${status}`;
    const shipAt = instantKey(record.shipDate);
    if (this.#count === this.#ids.length) {
      const larger = new Float64Array(this.#ids.length * 2);
      larger.set(this.#ids);
      this.#ids = larger;
    }
    if (record.id === undefined) {
      this.#ids[this.#count++] = Number.NaN;
      this.unnumbered.append(`${idx}\t${staged}\t${shipAt}\n`);
      return;
    }
    const id = record.id;
    this.#ids[this.#count++] = id;
    // id, then IMPORTED_COLUMNS; and EVENT_WRITE_COLUMNS.
    this.orders.append(`${id}\t${staged}\t${shipAt}\t${now}\t${status === 'shipped' ? now : '\\N'}\n`);
    this.events.append(`order.created\t${id}\t${status}\t${record.complete ? 't' : 'f'}\t${now}\n`);
    this.#rising &&= id > this.largest;
    this.smallest = Math.min(this.smallest, id);
    this.largest = Math.max(this.largest, id);
  }

  /** Whether two records of the chunk have the same id. */
  repeats(): boolean {
    if (this.#rising) return false;
    const ids = this.#ids.subarray(0, this.#count).filter((id) => !Number.isNaN(id));
    return ids.sort().some((id, i) => i > 0 && id === ids[i - 1]);
  }

  /** The chunk's ids as a PostgreSQL array, NULL for a record without one. */
  idsArray(): string {
    return `{${Array.from(this.#ids.subarray(0, this.#count), (id) => (Number.isNaN(id) ? 'NULL' : String(id))).join(',')}}`;
  }
}

/** Rows in COPY's text format, as UTF-8 in a buffer that grows when a chunk needs more and is then written over. */
class CopyText {
  #buffer = Buffer.allocUnsafe(1024 * 1024);
  #length = 0;

  append(rows: string): void {
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    if (this.#buffer.length - this.#length < rows.length * 3) {
      const larger = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#length + rows.length * 3));
      this.#buffer.copy(larger, 0, 0, this.#length);
      this.#buffer = larger;
    }
    this.#length += this.#buffer.write(rows, this.#length);
  }

  clear(): void {
    this.#length = 0;
  }

  /** The rows, in pieces of COPY_PIECE bytes that share the buffer's memory. */
  *pieces(): Generator<Buffer> {
    for (let at = 0; at < this.#length; at += COPY_PIECE) yield this.#buffer.subarray(at, Math.min(at + COPY_PIECE, this.#length));
  }

  get empty(): boolean {
    return this.#length === 0;
  }
}

/** Whether an order has one of these ids. */
async function anyTaken(client: PoolClient, ids: string): Promise<boolean> {
  return (await first(client, 'SELECT 1 FROM orders WHERE id = ANY($1::bigint[]) LIMIT 1', [ids])) !== undefined;
}

async function first<R extends object>(client: PoolClient, text: string, values: unknown[] = []): Promise<R | undefined> {
  return (await client.query<R & Record<string, unknown>>(text, values)).rows[0];
}

/**
 * Streams `text` into `sql`'s `COPY … FROM STDIN` (pg-copy-streams), a piece at a time as the
 * server takes them; a COPY the server refused fails here, with its error.
 */
async function copyIn(client: PoolClient, sql: string, text: CopyText): Promise<void> {
  if (text.empty) return;
  const copy = client.query(copyFrom(sql));
  const copied = finished(copy);
  copied.catch(() => undefined);
  for (const piece of text.pieces()) {
    if (copy.errored) break;
    if (!copy.write(piece)) await Promise.race([once(copy, 'drain'), copied]);
  }
  copy.end();
  await copied;
}

/** Bytes of COPY's text handed to the stream at a time. */
const COPY_PIECE = 64 * 1024;

/** A value in COPY's text format: the characters it gives a meaning to, escaped. */
function copyText(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!);
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * The numbering's statements (numberingSteps, in ../publish.ts) for the records without an id,
 * with their order.created events; `now` is the import's time. The records with an id are in
 * `orders` already.
 */
function numberingSql(now: string, events: boolean): NumberingSql {
  const numbered = '$2::bigint + row_number() OVER (ORDER BY idx)';
  const from = 'FROM import_unnumbered ORDER BY idx';
  return {
    largestId: statement('SELECT max(id) AS id FROM orders'),
    unassignable: (offset) => statement('SELECT idx FROM import_unnumbered ORDER BY idx OFFSET $1 LIMIT 1', [offset]),
    moveWithIds: [],
    moveWithoutIds: (largest) => [
      statement(
        `INSERT INTO orders (id, ${IMPORTED_COLUMNS}) SELECT ${numbered}, ${RECORD_COLUMNS}, ${importedTimes('$1', '$1')} ${from}`,
        [now, largest],
      ),
      ...(events ? [statement(createdEventsSql(numbered, '$1', from), [now, largest])] : []),
    ],
  };
}
