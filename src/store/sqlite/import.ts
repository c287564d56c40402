import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { instantKey } from '../../date-time';
import { importBatches } from '../core';
import { drive, statement } from '../dialect';
import { revisionSteps, throwReportedFault, settleSteps, type PublishSql } from '../publish';
import { ImportConflictError } from '../errors';
import { createdEventsSql } from '../events';
import { IMPORTED_COLUMNS, RECORD_COLUMNS, importedTimes } from '../sql';
import type { ImportRecord, ImportRecords } from '../types';
import { guard, sqliteCode, sqliteConnection, sqlitePlaceholders, translate } from './dialect';

const STAGING = 'temp.import_staging';
/** The staged records checked against the orders and given their ids (settleSteps): the orders rows to be, not yet checked. */
const SETTLED = 'temp.import_settled';
/** The twin of `orders` a publish in one transaction moves from, in the temp database. */
const TWIN = 'import_ready';
const READY = `temp.${TWIN}`;
/** The twin of `orders` each slice of a sliced publish is moved from. */
const SLICE_TWIN = 'import_slice';

/**
 * Imports records through connection-private tables, so that the file streams in without holding
 * the database's write lock: records are staged one by one; then, still without the lock, checked
 * against the orders and given their ids, then copied into twins of `orders` (its definition,
 * CHECKs and indexes); then published into `orders` in short write transactions (publish). Records with
 * an id go in first; records without one then get the next ids after the largest, in file order, so
 * an assigned id never collides with one in the file. Into a store without orders, records whose
 * ids rise are staged straight into the twin (see stage).
 */
export async function importThroughStaging(
  db: Database.Database,
  records: ImportRecords,
  now: string,
  options: PublishOptions = {},
): Promise<number> {
  guard(() => {
    dropStaging(db);
    // The staged rows are the records as the file gives them, unchecked; they are checked when
    // copied into a twin (one pass over all the rows costs half of checking them one insert at a time).
    db.exec(`CREATE TEMP TABLE import_staging (
      idx          INTEGER PRIMARY KEY,
      id           INTEGER,
      pet_id       INTEGER NOT NULL,
      quantity     INTEGER NOT NULL,
      ship_date    TEXT    NOT NULL,
      complete     INTEGER NOT NULL,
      status       TEXT    NOT NULL,
      ship_at      TEXT    NOT NULL
    ) STRICT`);
  });
  try {
    // Into a store without orders, records whose ids rise go straight into the twin of `orders`:
    // they need no check against the orders, nor ids, nor a copy out of the staging table.
    const direct = guard(() => largestOrderId(db).get() ?? null) === null;
    const staged = await stage(db, records, now, direct);
    return await publish(db, { ...staged, now }, options).catch((err: unknown) => {
      throw translate(err);
    });
  } finally {
    guard(() => dropStaging(db));
  }
}

function dropStaging(db: Database.Database): void {
  for (const table of [STAGING, SETTLED, READY, `temp.${SLICE_TWIN}`]) db.exec(`DROP TABLE IF EXISTS ${table}`);
}

/**
 * What staging found: how many records, and whether their ids rose through the file (then file
 * order is id order); and whether they are in the twin (TWIN) as orders already, not yet indexed,
 * instead of in the staging table (see stage).
 */
interface Staged {
  readonly count: number;
  readonly ascending: boolean;
  inTwin: boolean;
}

/** What the publish needs: the staged records, and the time every order of the import gets. */
interface Import extends Staged {
  readonly now: string;
}

/** The staging table's columns, in the order pushStagedRow gives their values. */
const STAGED_COLUMNS = `idx, id, ${RECORD_COLUMNS}`;
const STAGED_WIDTH = 8;

/**
 * Records staged by one INSERT: one statement of many rows pays the call into SQLite and the
 * statement's start once per batch, not once per record. Past about a hundred rows a larger batch
 * gains nothing (docs/performance-log.md has the figures); a batch a repeated id refuses is staged
 * again a record at a time.
 */
const ROWS_PER_INSERT = 128;

/** A record's values for the staging table (STAGED_COLUMNS), appended to `values`. */
function pushStagedRow(values: unknown[], index: number, record: ImportRecord): void {
  values.push(
    index,
    record.id ?? null,
    record.petId,
    record.quantity,
    record.shipDate,
    record.complete ? 1 : 0,
    record.status ?? 'pending',
    instantKey(record.shipDate),
  );
}

/**
 * Stages the records in file order, ROWS_PER_INSERT at a time. A repeated id is the error of the
 * record that repeats it: while the ids rise (as in most files) no record can repeat an earlier
 * one, so the unique index that finds a repeat is made only when an id does not rise, and a batch
 * it refuses is staged again a record at a time, to name the record. A record the file cannot give
 * is reported only after the records before it are staged, so that an earlier repeat is still the
 * error reported first.
 *
 * `direct` (a store without orders): while every record has an id and the ids rise, the records
 * go straight into the twin of `orders` as the orders they will be, each checked by its CHECKs as
 * it goes in, with the import's time `now`; such records need no check against the orders and no
 * numbering, and the copy out of the staging table is spared. The first record without an id, or
 * whose id does not rise, sends those back to the staging table (twinToStaging), where staging
 * goes on as above.
 */
async function stage(db: Database.Database, records: ImportRecords, now: string, direct: boolean): Promise<Staged> {
  const tuple = `(${Array<string>(STAGED_WIDTH).fill('?').join(', ')})`;
  /** Whether the records go straight into the twin: then each insert makes orders there, the import's time appended to its values. */
  let inTwin = direct;
  if (inTwin) guard(() => createTwin(db, TWIN));
  const into = (rows: number): string =>
    inTwin
      ? `WITH staged (${STAGED_COLUMNS}) AS (VALUES ${Array<string>(rows).fill(tuple).join(', ')})
         INSERT INTO ${READY} (id, ${IMPORTED_COLUMNS}) SELECT id, ${RECORD_COLUMNS}, ${importedTimes('?', '?')} FROM staged`
      : `INSERT INTO ${STAGING} (${STAGED_COLUMNS}) VALUES ${Array<string>(rows).fill(tuple).join(', ')}`;
  let insertOne = db.prepare(into(1));
  let insertBatch = db.prepare(into(ROWS_PER_INSERT));
  const times = (): string[] => (inTwin ? [now, now] : []);
  const toStaging = (): void => {
    twinToStaging(db);
    inTwin = false;
    insertOne = db.prepare(into(1));
    insertBatch = db.prepare(into(ROWS_PER_INSERT));
  };
  const firstWithId = db.prepare<[number], { idx: number }>(`SELECT idx FROM ${STAGING} WHERE id = ?`);
  /** The values of the records read but not yet staged. */
  let values: unknown[] = [];
  let staged = 0;
  /** Stages the records read so far; throws the conflict of the first that repeats an id. */
  const flush = (): void => {
    const batch = values;
    const first = staged;
    values = [];
    staged += batch.length / STAGED_WIDTH;
    if (batch.length === ROWS_PER_INSERT * STAGED_WIDTH) {
      try {
        insertBatch.run(...batch, ...times());
        return;
      } catch (err) {
        // The batch was undone whole; staged again one record at a time, the one that repeats an id is named.
        if (sqliteCode(err) !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
      }
    }
    for (let at = 0; at < batch.length; at += STAGED_WIDTH) {
      try {
        insertOne.run(...batch.slice(at, at + STAGED_WIDTH), ...times());
      } catch (err) {
        const id = batch[at + 1];
        if (sqliteCode(err) === 'SQLITE_CONSTRAINT_UNIQUE' && typeof id === 'number') {
          throw new ImportConflictError(first + at / STAGED_WIDTH, { kind: 'repeated_id', id, first: firstWithId.get(id)!.idx });
        }
        throw err;
      }
    }
  };
  let index = 0;
  let largest = -Infinity;
  let ascending = true;
  // Only the temp database is written here, so this transaction takes no lock on the main file.
  db.exec('BEGIN');
  try {
    try {
      for await (const batch of importBatches(records)) {
        for (const record of batch) {
          // A record without an id, or one whose id does not rise, needs the staging table's checks and numbering.
          if (inTwin && (record.id === undefined || record.id <= largest)) {
            flush();
            toStaging();
          }
          if (ascending && record.id !== undefined) {
            if (record.id > largest) largest = record.id;
            else {
              flush();
              db.exec(`CREATE UNIQUE INDEX temp.import_staging_id ON import_staging (id)`);
              ascending = false;
            }
          }
          pushStagedRow(values, index, record);
          index += 1;
          if (index - staged === ROWS_PER_INSERT) flush();
        }
      }
    } catch (err) {
      // The records read before the one that could not be read are staged first: a repeat among them is the fault to report.
      await throwReportedFault({ repeat: repeatIn(flush), unreadable: { error: err }, taken: () => undefined });
      throw err;
    }
    flush();
    db.exec('COMMIT');
    return { count: index, ascending, inTwin };
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw translate(err);
  }
}

/** The records staged straight into the twin, back into the staging table as the records they were, in file order (their ids rose); the twin dropped. */
function twinToStaging(db: Database.Database): void {
  db.exec(`INSERT INTO ${STAGING} (${STAGED_COLUMNS}) SELECT row_number() OVER (ORDER BY id) - 1, id, ${RECORD_COLUMNS} FROM ${READY}`);
  db.exec(`DROP TABLE ${READY}`);
}

/** The repeated id that staging the records in hand finds, if it finds one; any other error is thrown. */
function repeatIn(stageRead: () => void): ImportConflictError | undefined {
  try {
    stageRead();
    return undefined;
  } catch (err) {
    if (err instanceof ImportConflictError && err.conflict.kind === 'repeated_id') return err;
    throw err;
  }
}

/** A staged record's columns as an imported order's after its id (id, then IMPORTED_COLUMNS), `$n` and `$n+1` being the import's time. */
const AS_ORDER = (n: number): string => `${RECORD_COLUMNS}, ${importedTimes(`$${n}`, `$${n + 1}`)}`;

/**
 * The checks and numbering of the publish (settleSteps, in ../publish.ts), on the staging table,
 * moving the records into `into` with the import's time, in id order.
 */
function settleSql(into: string, { now, ascending }: Import): PublishSql {
  return {
    firstTaken: statement(`SELECT s.idx, s.id FROM ${STAGING} s JOIN main.orders o ON o.id = s.id ORDER BY s.idx LIMIT 1`),
    largestId: statement(`SELECT max(id) AS id FROM (SELECT max(id) AS id FROM main.orders UNION ALL SELECT max(id) FROM ${STAGING})`),
    unassignable: (offset) => statement(`SELECT idx FROM ${STAGING} WHERE id IS NULL ORDER BY idx LIMIT 1 OFFSET $1`, [offset]),
    moveWithIds: [
      statement(
        // Ids that rose through the file are in id order already: no sort.
        `INSERT INTO ${into} (id, ${IMPORTED_COLUMNS}) SELECT id, ${AS_ORDER(1)} FROM ${STAGING} WHERE id IS NOT NULL ORDER BY ${ascending ? 'idx' : 'id'}`,
        [now, now],
      ),
    ],
    moveWithoutIds: (largest) => [
      statement(
        `INSERT INTO ${into} (id, ${IMPORTED_COLUMNS})
         SELECT $1 + row_number() OVER (ORDER BY idx), ${AS_ORDER(2)} FROM ${STAGING} WHERE id IS NULL ORDER BY idx`,
        [largest, now, now],
      ),
    ],
  };
}

/**
 * The move into `orders`. The twin has the same columns, CHECKs and indexes, so SQLite copies each
 * row and each index entry as it is, in key order, instead of building and checking them again
 * (its transfer optimisation; tests/store/sqlite/import.test.ts shows that it applies), which
 * shortens the move, during which every cancel of a running server waits for the lock.
 */
export const MOVE_SQL = `INSERT INTO main.orders SELECT * FROM ${READY}`;

/** The move of one slice of a sliced publish: the same transfer, from the slice's own twin. */
export const SLICE_MOVE_SQL = `INSERT INTO main.orders SELECT * FROM temp.${SLICE_TWIN}`;

/**
 * The order.created event of every order in the twin `name`, in id order, set-wise: written in the
 * same transaction as the move of those orders.
 */
function twinEventsSql(name: string): string {
  return createdEventsSql('id', 'created_at', `FROM temp.${name} ORDER BY id`, 'main.order_events');
}

/** The largest id of the orders, or null: it changes whenever another import adds an order past it. */
function largestOrderId(db: Database.Database): Database.Statement<[], number | null> {
  return db.prepare<[], number | null>('SELECT max(id) FROM main.orders').pluck();
}

/** How an import publishes: the size of its slices, its lease, and (for tests) a look between slices and at its waits. */
export interface PublishOptions {
  /** Orders per slice: an import of more is published a slice per write transaction (default 50,000). */
  sliceRows?: number;
  /** How long a sliced publish may go without committing a slice before another import takes it for abandoned (default 60 s). */
  leaseMs?: number;
  /** Called after each slice has committed, with its number (from 1). */
  afterSlice?: (slice: number) => void | Promise<void>;
  /** Called each time the import finds another one publishing, before it waits for it. */
  onWait?: () => void;
  /** The clock leases are written and read by, in milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /**
   * Whether the import writes its order.created events (default true). Only the bench turns them
   * off, to measure what they cost (scripts/bench/baselines/import-without-events.ts): a store's
   * own import always writes them.
   */
  events?: boolean;
}

const SLICE_ROWS = 50_000;
const LEASE_MS = 60_000;
/** How often an import waiting for another's sliced publish looks again. */
const WAIT_MS = 100;

/**
 * Publishes the staged records. Everything that takes time is done before the write lock: the
 * checks against the orders and the ids (settleSteps), and the copies into twins of `orders` that
 * check every row and index it. An import of more than a slice whose span of ids holds no order's
 * (every import without ids) into a store that has orders is then published a slice per short
 * write transaction, hidden until the last (publishSlices), so that a running server's cancels
 * never wait for more than a slice. Any other is moved in one transaction, with the twin indexed as `orders` is, so that SQLite
 * copies records and index entries as they are. One import publishes at a time: another waits.
 *
 * The checks hold unless another import added orders in between: then the largest id has moved
 * (so the ids given may be wrong), or a record's id is now taken (the move fails on it). Either
 * way the move is undone and everything is done again under the lock, in one transaction, so the
 * rules and the errors are those of an import that ran alone.
 */
async function publish(db: Database.Database, staged: Import, options: PublishOptions): Promise<number> {
  const { count } = staged;
  const sliceRows = options.sliceRows ?? SLICE_ROWS;
  const largest = largestOrderId(db);
  /** Whether the records staged straight into the twin have been indexed there. */
  let indexed = false;
  /** The records staged straight into the twin, back into the staging table: the store has orders now. */
  const leaveTwin = (): void => {
    if (!staged.inTwin) return;
    twinToStaging(db);
    staged.inTwin = false;
  };
  for (;;) {
    await publishedOrRemoved(db, options);
    const seen = largest.get() ?? null;
    // Into a store without orders no cancel can be waiting for the lock: the records are settled
    // straight into the twin (when staging did not already put them there), and moved in one
    // transaction, which copies index pages whole into the empty table instead of entry by entry.
    const empty = seen === null;
    if (!empty) leaveTwin();
    let span: Span | undefined;
    if (empty && staged.inTwin) {
      if (!indexed) indexTwin(db, TWIN);
      indexed = true;
    } else if (empty) twinOfStaged(db, staged);
    else {
      settle(db, staged);
      const range = db
        .prepare<[], { first: number | null; last: number | null }>(`SELECT min(id) AS first, max(id) AS last FROM ${SETTLED}`)
        .get();
      span = range?.first == null || range.last == null ? undefined : { from: range.first, to: range.last };
    }
    const sliced = span !== undefined && count > sliceRows && noOrderWithin(db, span);
    if (!sliced && !empty) twinOfSettled(db, TWIN);
    let begun: Publishing;
    try {
      const outcome = db
        .transaction((): Publishing | number | 'wait' => {
          if (publishingNow(db) !== undefined) return 'wait';
          if ((largest.get() ?? null) !== seen) throw new OrdersMoved();
          if (sliced) {
            if (span === undefined || !noOrderWithin(db, span)) throw new OrdersMoved();
            return startPublishing(db, span, options);
          }
          return move(db, count, options);
        })
        .immediate();
      if (outcome === 'wait') continue;
      if (typeof outcome === 'number') return outcome;
      begun = outcome;
    } catch (err) {
      if (!(err instanceof OrdersMoved) && sqliteCode(err) !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw err;
      const outcome = db
        .transaction((): number | 'wait' => {
          if (publishingNow(db) !== undefined) return 'wait';
          leaveTwin();
          settle(db, staged);
          twinOfSettled(db, TWIN);
          return move(db, count, options);
        })
        .immediate();
      if (outcome === 'wait') continue;
      return outcome;
    }
    return publishSlices(db, count, begun, sliceRows, options);
  }
}

/** Another import added orders between the checks and the write lock. */
class OrdersMoved extends Error {}

/** The ids of an import's orders, from the first to the last. */
interface Span {
  readonly from: number;
  readonly to: number;
}

/** A sliced publish under way: its orders are those in its span, hidden while its row stands. */
interface Publishing extends Span {
  readonly token: string;
}

/** Whether no order has an id within the span: then the import's orders can be told apart by id alone. */
function noOrderWithin(db: Database.Database, { from, to }: Span): boolean {
  return (
    db.prepare<[number, number], number | undefined>('SELECT 1 FROM main.orders WHERE id BETWEEN ? AND ? LIMIT 1').pluck().get(from, to) ===
    undefined
  );
}

/** The sliced publish under way, if one is: its span, owner and lease. */
function publishingNow(db: Database.Database): { from_id: number; to_id: number; token: string; until_ms: number } | undefined {
  return db
    .prepare<[], { from_id: number; to_id: number; token: string; until_ms: number }>(
      'SELECT from_id, to_id, token, until_ms FROM main.import_publishing',
    )
    .get();
}

/** In the write lock: marks the orders in the span as this import's, hidden until it is published. */
function startPublishing(db: Database.Database, { from, to }: Span, options: PublishOptions): Publishing {
  const token = randomUUID();
  // events_from: the seq its first event will have. Every event from it on, its own and any other
  // committed meanwhile, is held back from the feed until it shows its orders (EVENTS_SQL, ./rows.ts).
  db.prepare(
    `INSERT INTO main.import_publishing (one, from_id, to_id, token, until_ms, events_from)
     VALUES (1, ?, ?, ?, ?, coalesce((SELECT seq FROM main.sqlite_sequence WHERE name = 'order_events'), 0) + 1)`,
  ).run(from, to, token, leaseEnd(options));
  return { from, to, token };
}

function leaseEnd(options: PublishOptions): number {
  return (options.now ?? Date.now)() + (options.leaseMs ?? LEASE_MS);
}

/**
 * In the write lock: throws unless the publish under way is still this one (another import took it
 * for abandoned, and removed its rows, after it had gone a whole lease without a slice), and renews its lease.
 */
function stillOurs(db: Database.Database, publishing: Publishing, options: PublishOptions): void {
  if (publishingNow(db)?.token !== publishing.token) {
    throw new Error(
      `the import went ${(options.leaseMs ?? LEASE_MS) / 1000} s without publishing a slice and was abandoned; nothing was imported`,
    );
  }
  db.prepare('UPDATE main.import_publishing SET until_ms = ?').run(leaseEnd(options));
}

/**
 * Publishes the settled rows into `orders` a slice at a time: each slice checked and indexed in a
 * twin of its own, then moved from it (SQLite's transfer) in a write transaction of its own, while
 * every read and write of the store leaves them out (the orders in its span, while
 * import_publishing has its row: PUBLISHED, in ./rows.ts); then, in a last short transaction,
 * shows them all at once with the new revision. A publish that fails on the way removes what it
 * published; one whose process dies is removed by the next import, once its lease has run out.
 */
async function publishSlices(
  db: Database.Database,
  count: number,
  publishing: Publishing,
  sliceRows: number,
  options: PublishOptions,
): Promise<number> {
  const next = db.prepare<[number, number], number | null>(`SELECT id FROM ${SETTLED} WHERE id >= ? ORDER BY id LIMIT 1 OFFSET ?`).pluck();
  try {
    let from: number | null = publishing.from;
    for (let n = 1; from !== null; n += 1) {
      const until: number | null = next.get(from, sliceRows) ?? null;
      // Outside the lock: the slice checked and indexed in a twin of its own ...
      twinOfSettled(db, SLICE_TWIN, { from, until });
      // ... so that under the lock SQLite copies its records and index entries as they are.
      db.transaction(() => {
        stillOurs(db, publishing, options);
        db.exec(SLICE_MOVE_SQL);
        if (options.events !== false) db.exec(twinEventsSql(SLICE_TWIN));
      }).immediate();
      from = until;
      await options.afterSlice?.(n);
    }
    return db
      .transaction(() => {
        stillOurs(db, publishing, options);
        db.prepare('DELETE FROM main.import_publishing').run();
        return drive(revisionSteps(count), sqliteConnection(db));
      })
      .immediate();
  } catch (err) {
    try {
      await removeHidden(db, publishing, options);
    } catch {
      // Its lease runs out, and the next import removes them.
    }
    throw err;
  }
}

/**
 * Waits while another import publishes in slices, and removes what one that was abandoned (its
 * lease run out: its process died, or stopped) had published, so that the checks and ids of this
 * import are made against the orders as they will stay.
 */
async function publishedOrRemoved(db: Database.Database, options: PublishOptions): Promise<void> {
  for (;;) {
    const now = publishingNow(db);
    if (now === undefined) return;
    const clock = options.now ?? Date.now;
    if (now.until_ms > clock()) {
      options.onWait?.();
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
      continue;
    }
    const taken = db
      .transaction((): Publishing | undefined => {
        const still = publishingNow(db);
        if (still === undefined || still.until_ms > clock()) return undefined;
        const token = randomUUID();
        db.prepare('UPDATE main.import_publishing SET token = ?, until_ms = ?').run(token, leaseEnd(options));
        return { from: still.from_id, to: still.to_id, token };
      })
      .immediate();
    if (taken !== undefined) await removeHidden(db, taken, options);
  }
}

/** Removes a sliced publish's hidden orders a slice per write transaction, then its mark. */
async function removeHidden(db: Database.Database, publishing: Publishing, options: PublishOptions): Promise<void> {
  const remove = db.prepare<[number, number, number]>(
    sqlitePlaceholders('DELETE FROM main.orders WHERE id IN (SELECT id FROM main.orders WHERE id BETWEEN $1 AND $2 ORDER BY id LIMIT $3)'),
  );
  // Its events are the order.created ones of its span from its first seq on.
  const removeEvents = db.prepare<[number, number, number]>(
    sqlitePlaceholders(`DELETE FROM main.order_events WHERE seq IN (
       SELECT seq FROM main.order_events
       WHERE seq >= (SELECT events_from FROM main.import_publishing) AND type = 'order.created' AND order_id BETWEEN $1 AND $2
       ORDER BY seq LIMIT $3)`),
  );
  for (;;) {
    const removed = db
      .transaction(() => {
        stillOurs(db, publishing, options);
        const batch = options.sliceRows ?? SLICE_ROWS;
        const { changes } = remove.run(publishing.from, publishing.to, batch);
        const events = removeEvents.run(publishing.from, publishing.to, batch).changes;
        if (changes + events === 0) db.prepare('DELETE FROM main.import_publishing').run();
        return changes + events;
      })
      .immediate();
    if (removed === 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Settles the staged records (settleSteps) into a fresh ${SETTLED}: the columns of `orders`, checking nothing yet. */
function settle(db: Database.Database, staged: Import): void {
  db.exec(`DROP TABLE IF EXISTS ${SETTLED}`);
  db.exec(`CREATE TABLE ${SETTLED} (id INTEGER PRIMARY KEY, ${IMPORTED_COLUMNS})`);
  drive(settleSteps(settleSql(SETTLED, staged), staged.count), sqliteConnection(db));
}

/**
 * Settles the staged records (settleSteps) straight into a fresh twin of `orders` (TWIN), each
 * checked by its CHECKs as it goes in, then indexes it as `orders` is.
 */
function twinOfStaged(db: Database.Database, staged: Import): void {
  freshTwin(db, TWIN, () => drive(settleSteps(settleSql(READY, staged), staged.count), sqliteConnection(db)));
}

/**
 * Makes the twin `name` of `orders` afresh from the settled rows, all of them or those with ids
 * from `from` up to (not including) `until`, with no upper bound when it is null: every row
 * checked (the twin's CHECKs) as it is copied, then indexed as `orders` is, so that the move from it
 * copies records and index entries as they are. A bound only ever leaves out rows another slice
 * copies, so that a row no CHECK would pass is never left out unchecked.
 */
function twinOfSettled(db: Database.Database, name: string, slice?: { from: number; until: number | null }): void {
  const bounds = slice === undefined ? [] : slice.until === null ? [slice.from] : [slice.from, slice.until];
  const where = ['', 'WHERE id >= ?', 'WHERE id >= ? AND id < ?'][bounds.length];
  freshTwin(db, name, () =>
    db
      .prepare(`INSERT INTO temp.${name} (id, ${IMPORTED_COLUMNS}) SELECT id, ${IMPORTED_COLUMNS} FROM ${SETTLED} ${where} ORDER BY id`)
      .run(...bounds),
  );
}

/** Makes the twin `name` of `orders` afresh, fills it (its CHECKs check every row), then indexes it as `orders` is. */
function freshTwin(db: Database.Database, name: string, fill: () => unknown): void {
  createTwin(db, name);
  fill();
  indexTwin(db, name);
}

/** Makes the twin `name` of `orders` afresh: its definition and CHECKs, empty, without its indexes yet. */
function createTwin(db: Database.Database, name: string): void {
  db.exec(`DROP TABLE IF EXISTS temp.${name}`);
  db.exec(twinOfOrders(db, name).table);
}

/** Indexes the twin `name` as `orders` is: done once it is full, which is quicker than entry by entry. */
function indexTwin(db: Database.Database, name: string): void {
  for (const index of twinOfOrders(db, name).indexes) db.exec(index);
}

/**
 * The statements that make a twin of `orders` (in the temp database, named `name`) and its indexes:
 * the schema's own `CREATE TABLE` and `CREATE INDEX` statements, only their heads rewritten.
 */
export function twinOfOrders(db: Database.Database, name = TWIN): { table: string; indexes: string[] } {
  const schema = db
    .prepare<[], { type: string; sql: string }>(
      `SELECT type, sql FROM main.sqlite_schema WHERE tbl_name = 'orders' AND sql IS NOT NULL ORDER BY type = 'index', name`,
    )
    .all();
  const [table, ...indexes] = schema;
  if (table?.type !== 'table') throw new Error('the orders table is missing');
  return {
    table: twin(table.sql, TABLE_HEAD, (create) => `${create} TEMP TABLE ${name} (`),
    indexes: indexes.map(({ sql }, n) => twin(sql, INDEX_HEAD, (create) => `${create} INDEX temp.${name}_${n} ON ${name} (`)),
  };
}

/** Under the write lock: the twin's rows into `orders`, and the revision. */
function move(db: Database.Database, count: number, options: PublishOptions): number {
  db.exec(MOVE_SQL);
  if (options.events !== false) db.exec(twinEventsSql(TWIN));
  return drive(revisionSteps(count), sqliteConnection(db));
}

const NAME = String.raw`(?:"orders"|orders|\[orders\]|\`orders\`)`;
const TABLE_HEAD = new RegExp(String.raw`^(CREATE)\s+TABLE\s+${NAME}\s*\(`, 'i');
const INDEX_HEAD = new RegExp(String.raw`^(CREATE(?:\s+UNIQUE)?)\s+INDEX\s+(?:"[^"]+"|\[[^\]]+\]|\`[^\`]+\`|\w+)\s+ON\s+${NAME}\s*\(`, 'i');

/** A `CREATE TABLE` or `CREATE INDEX` of `orders`, its head (up to the first parenthesis) rewritten for the twin; the rest verbatim. */
function twin(sql: string, head: RegExp, rewrite: (create: string) => string): string {
  const match = head.exec(sql);
  if (match === null) throw new Error(`cannot read the orders schema: ${sql.slice(0, 60)}`);
  return rewrite(match[1]!) + sql.slice(match[0].length);
}
