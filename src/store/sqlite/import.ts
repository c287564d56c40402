import type Database from 'better-sqlite3';
import { instantKey } from '../../contract/date-time';
import { driveSync } from '../migration';
import { revisionSteps, settleSteps, type PublishRow, type PublishSql, type PublishStep } from '../publish';
import { sqlitePlaceholders } from '../shared';
import { ImportConflictError, type ImportRecord } from '../types';
import { guard, sqliteCode, translate } from './errors';

const STAGING = 'temp.import_staging';
/** The twin of `orders` the records are settled into, in the temp database. */
const TWIN = 'import_ready';
const READY = `temp.${TWIN}`;

/**
 * Imports records through connection-private tables, so that the file streams in without holding
 * the database's write lock: records are staged one by one; then, still without the lock, checked
 * against the orders, given their ids and copied into a twin of `orders` (its definition, CHECKs
 * and indexes: publish); then moved into `orders` in one short immediate transaction. Records with
 * an id go in first; records without one then get the next ids after the largest, in file order, so
 * an assigned id never collides with one in the file.
 */
export async function importThroughStaging(
  db: Database.Database,
  records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>,
  now: string,
): Promise<number> {
  guard(() => {
    dropStaging(db);
    // The staged rows are the orders rows to be, unchecked; they are checked when copied into the
    // twin (one pass over all the rows costs half of checking them one insert at a time).
    db.exec(`CREATE TEMP TABLE import_staging (
      idx          INTEGER PRIMARY KEY,
      id           INTEGER UNIQUE,
      pet_id       INTEGER NOT NULL,
      quantity     INTEGER NOT NULL,
      ship_date    TEXT    NOT NULL,
      complete     INTEGER NOT NULL,
      status       TEXT    NOT NULL,
      created_at   TEXT    NOT NULL,
      shipped_at   TEXT,
      cancelled_at TEXT,
      ship_at      TEXT    NOT NULL
    ) STRICT`);
  });
  try {
    const count = await stage(db, records, now);
    return guard(() => publish(db, count));
  } finally {
    guard(() => dropStaging(db));
  }
}

function dropStaging(db: Database.Database): void {
  db.exec(`DROP TABLE IF EXISTS ${STAGING}`);
  db.exec(`DROP TABLE IF EXISTS ${READY}`);
}

async function stage(db: Database.Database, records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>, now: string): Promise<number> {
  const insert = db.prepare(
    `INSERT INTO ${STAGING} (idx, id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, ship_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const firstWithId = db.prepare<[number], { idx: number }>(`SELECT idx FROM ${STAGING} WHERE id = ?`);
  let index = 0;
  // Only the temp database is written here, so this transaction takes no lock on the main file.
  db.exec('BEGIN');
  try {
    for await (const record of records) {
      try {
        const status = record.status ?? 'pending';
        insert.run(
          index,
          record.id ?? null,
          record.petId,
          record.quantity,
          record.shipDate,
          record.complete ? 1 : 0,
          status,
          now,
          status === 'shipped' ? now : null,
          instantKey(record.shipDate),
        );
      } catch (err) {
        if (sqliteCode(err) === 'SQLITE_CONSTRAINT_UNIQUE' && record.id !== undefined) {
          const first = firstWithId.get(record.id)!.idx;
          throw new ImportConflictError(index, { kind: 'repeated_id', id: record.id, first });
        }
        throw err;
      }
      index += 1;
    }
    db.exec('COMMIT');
    return index;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw translate(err);
  }
}

const COLUMNS = 'pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at';

/**
 * The checks and numbering of the publish (settleSteps, in ../publish.ts), on the staging table,
 * moving the records into the twin. The orders' times were set as the records were staged.
 */
const SETTLE_SQL: PublishSql = {
  firstTaken: { text: `SELECT s.idx, s.id FROM ${STAGING} s JOIN main.orders o ON o.id = s.id ORDER BY s.idx LIMIT 1`, values: [] },
  largestId: {
    text: `SELECT max(id) AS id FROM (SELECT max(id) AS id FROM main.orders UNION ALL SELECT max(id) FROM ${STAGING})`,
    values: [],
  },
  unassignable: (offset) => ({ text: `SELECT idx FROM ${STAGING} WHERE id IS NULL ORDER BY idx LIMIT 1 OFFSET $1`, values: [offset] }),
  moveWithIds: {
    text: `INSERT INTO ${READY} (id, ${COLUMNS}) SELECT id, ${COLUMNS} FROM ${STAGING} WHERE id IS NOT NULL ORDER BY id`,
    values: [],
  },
  moveWithoutIds: (largest) => ({
    text: `INSERT INTO ${READY} (id, ${COLUMNS})
           SELECT $1 + row_number() OVER (ORDER BY idx), ${COLUMNS} FROM ${STAGING} WHERE id IS NULL ORDER BY idx`,
    values: [largest],
  }),
};

/**
 * The move into `orders`. The twin has the same columns, CHECKs and indexes, so SQLite copies each
 * row and each index entry as it is, in key order, instead of building and checking them again
 * (its transfer optimisation; tests/sqlite-import.test.ts shows that it applies): 1,000,000 orders
 * move in about half the time, time in which every cancel of a running server waits for the lock.
 */
export const MOVE_SQL = `INSERT INTO main.orders SELECT * FROM ${READY}`;

/** The largest id of the orders, or null: it changes whenever another import adds an order past it. */
const LARGEST_ORDER_SQL = 'SELECT max(id) FROM main.orders';

/**
 * Publishes the staged records. Everything that takes time is done before the write lock: the
 * checks against the orders and the ids (settleSteps), the copy into the twin (which checks every
 * row) and the twin's indexes. Under the lock, only the move and the revision. The checks hold
 * unless another import added orders in between: then the largest id has moved (so the ids given
 * may be wrong), or a record's id is now taken (the move fails on it). Either way the move is
 * undone and everything is done again under the lock, so the rules and the errors are those of
 * an import that ran alone.
 */
function publish(db: Database.Database, count: number): number {
  const largest = db.prepare<[], number | null>(LARGEST_ORDER_SQL).pluck();
  const seen = largest.get();
  settle(db, count);
  try {
    return db
      .transaction(() => {
        if (largest.get() !== seen) throw new OrdersMoved();
        return move(db, count);
      })
      .immediate();
  } catch (err) {
    if (!(err instanceof OrdersMoved) && sqliteCode(err) !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw err;
  }
  return db
    .transaction(() => {
      settle(db, count);
      return move(db, count);
    })
    .immediate();
}

/** Another import added orders between the checks and the write lock. */
class OrdersMoved extends Error {}

/** Runs publish steps on the connection: `rows` answers its rows, `run` answers nothing. */
function take(db: Database.Database) {
  return (step: PublishStep): PublishRow[] | undefined => {
    if ('rows' in step) return db.prepare<unknown[], PublishRow>(sqlitePlaceholders(step.rows.text)).all(...step.rows.values);
    db.prepare(sqlitePlaceholders(step.run.text)).run(...step.run.values);
    return undefined;
  };
}

/** Makes the twin of `orders` afresh and settles the staged records into it, then indexes it as `orders` is indexed. */
function settle(db: Database.Database, count: number): void {
  const { table, indexes } = twinOfOrders(db);
  db.exec(`DROP TABLE IF EXISTS ${READY}`);
  db.exec(table);
  driveSync(settleSteps(SETTLE_SQL, count), take(db));
  for (const index of indexes) db.exec(index);
}

/**
 * The statements that make the twin of `orders` (in the temp database, as ${READY}) and its indexes:
 * the schema's own `CREATE TABLE` and `CREATE INDEX` statements, only their heads rewritten.
 */
export function twinOfOrders(db: Database.Database): { table: string; indexes: string[] } {
  const schema = db
    .prepare<[], { type: string; sql: string }>(
      `SELECT type, sql FROM main.sqlite_schema WHERE tbl_name = 'orders' AND sql IS NOT NULL ORDER BY type = 'index', name`,
    )
    .all();
  const [table, ...indexes] = schema;
  if (table?.type !== 'table') throw new Error('the orders table is missing');
  return {
    table: twin(table.sql, TABLE_HEAD, (create) => `${create} TEMP TABLE ${TWIN} (`),
    indexes: indexes.map(({ sql }, n) => twin(sql, INDEX_HEAD, (create) => `${create} INDEX temp.${TWIN}_${n} ON ${TWIN} (`)),
  };
}

/** Under the write lock: the twin's rows into `orders`, and the revision. */
function move(db: Database.Database, count: number): number {
  db.exec(MOVE_SQL);
  return driveSync(revisionSteps(count), take(db));
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
