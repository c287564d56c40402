import type Database from 'better-sqlite3';
import { instantKey } from '../../contract/date-time';
import { driveSync } from '../migration';
import { publishSteps, type PublishRow, type PublishSql } from '../publish';
import { sqlitePlaceholders } from '../shared';
import { ImportConflictError, type ImportRecord } from '../types';
import { guard, sqliteCode, translate } from './errors';

const STAGING = 'temp.import_staging';
const CHECKED = 'temp.import_checked';

/**
 * Imports records through a connection-private staging table, so that the file streams in without
 * holding the database's write lock: records are staged one by one, then moved into `orders` in one
 * short immediate transaction. Records with an id go in first; records without one then get the
 * next ids after the largest, in file order, so an assigned id never collides with one in the file.
 */
export async function importThroughStaging(
  db: Database.Database,
  records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>,
  now: string,
): Promise<number> {
  const columns = `
      id           INTEGER UNIQUE,
      pet_id       INTEGER NOT NULL,
      quantity     INTEGER NOT NULL,
      ship_date    TEXT    NOT NULL,
      complete     INTEGER NOT NULL,
      status       TEXT    NOT NULL,
      created_at   TEXT    NOT NULL,
      shipped_at   TEXT,
      cancelled_at TEXT,
      ship_at      TEXT    NOT NULL`;
  guard(() => {
    dropStaging(db);
    // The staged rows are the orders rows to be. They stream in unchecked, then are copied at once
    // into a table with every CHECK the orders table has, taken from its definition in the schema
    // (one pass over all the rows costs half of checking them one insert at a time). Checked
    // there, they are not checked again while the write lock is held (see publish).
    db.exec(`CREATE TEMP TABLE import_staging (idx INTEGER PRIMARY KEY, ${columns}) STRICT`);
    db.exec(`CREATE TEMP TABLE import_checked (
      idx INTEGER PRIMARY KEY, ${columns},
      ${checkConstraints(ordersDefinition(db)).join(',\n      ')}
    ) STRICT`);
  });
  try {
    const count = await stage(db, records, now);
    return guard(() => {
      db.exec(`INSERT INTO ${CHECKED} SELECT * FROM ${STAGING} ORDER BY idx`);
      db.pragma('ignore_check_constraints = ON');
      try {
        return db.transaction(() => publish(db, count)).immediate();
      } finally {
        db.pragma('ignore_check_constraints = OFF');
      }
    });
  } finally {
    guard(() => dropStaging(db));
  }
}

function dropStaging(db: Database.Database): void {
  db.exec(`DROP TABLE IF EXISTS ${STAGING}`);
  db.exec(`DROP TABLE IF EXISTS ${CHECKED}`);
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
 * The publish's statements (publishSteps, in ../publish.ts) on the checked staging table. The
 * orders' times were set as the records were staged.
 */
const PUBLISH_SQL: PublishSql = {
  firstTaken: { text: `SELECT s.idx, s.id FROM ${CHECKED} s JOIN main.orders o ON o.id = s.id ORDER BY s.idx LIMIT 1`, values: [] },
  largestId: {
    text: `SELECT max(id) AS id FROM (SELECT max(id) AS id FROM main.orders UNION ALL SELECT max(id) FROM ${CHECKED})`,
    values: [],
  },
  unassignable: (offset) => ({ text: `SELECT idx FROM ${CHECKED} WHERE id IS NULL ORDER BY idx LIMIT 1 OFFSET $1`, values: [offset] }),
  moveWithIds: {
    text: `INSERT INTO main.orders (id, ${COLUMNS}) SELECT id, ${COLUMNS} FROM ${CHECKED} WHERE id IS NOT NULL ORDER BY idx`,
    values: [],
  },
  moveWithoutIds: (largest) => ({
    text: `INSERT INTO main.orders (id, ${COLUMNS})
           SELECT $1 + row_number() OVER (ORDER BY idx), ${COLUMNS} FROM ${CHECKED} WHERE id IS NULL ORDER BY idx`,
    values: [largest],
  }),
};

/**
 * Moves the staged rows into `orders`, in the one immediate transaction that holds the write lock.
 * The CHECKs were evaluated when the rows were copied into the checked table (the same
 * constraints, on the same values), so the connection skips them here: they were most of the
 * move's time (1,000,000 orders: 6.5 s with them, 1.5 s without), time in which every cancel of a
 * running server waits for the lock. The one value made here, the id of a record without one, is
 * checked before anything moves (publishSteps).
 */
function publish(db: Database.Database, count: number): number {
  return driveSync(publishSteps(PUBLISH_SQL, count), (step): PublishRow[] | undefined => {
    if ('rows' in step) return db.prepare<unknown[], PublishRow>(sqlitePlaceholders(step.rows.text)).all(...step.rows.values);
    db.prepare(sqlitePlaceholders(step.run.text)).run(...step.run.values);
    return undefined;
  });
}

/** The `CREATE TABLE` statement of `orders`, as the schema holds it. */
function ordersDefinition(db: Database.Database): string {
  const row = db.prepare<[], { sql: string }>(`SELECT sql FROM main.sqlite_schema WHERE type = 'table' AND name = 'orders'`).get();
  if (row === undefined) throw new Error('the orders table is missing');
  return row.sql;
}

/**
 * Every CHECK constraint of a `CREATE TABLE` statement, column or table level, as a table
 * constraint (`CONSTRAINT name CHECK (expr)`, or `CHECK (expr)` when unnamed), its text verbatim:
 * a column's CHECK names only its column, so it means the same at table level.
 */
export function checkConstraints(createTable: string): string[] {
  const checks: string[] = [];
  let end = 0;
  for (const i of unquoted(createTable)) {
    if (i < end) continue;
    const word = /^CHECK\s*\(/i.exec(createTable.slice(i, i + 16));
    if (word === null || /[A-Za-z0-9_$]/.test(createTable[i - 1] ?? ' ')) continue;
    const open = i + word[0].length - 1;
    end = matchingParen(createTable, open) + 1;
    const name = /CONSTRAINT\s+("[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)\s*$/i.exec(createTable.slice(0, i));
    checks.push(`${name ? `CONSTRAINT ${name[1]} ` : ''}CHECK ${createTable.slice(open, end)}`);
  }
  return checks;
}

/** The indices of `sql`, from `from` on, that are outside its quoted strings and identifiers. */
function* unquoted(sql: string, from = 0): Generator<number> {
  let i = from;
  while (i < sql.length) {
    const quote = sql[i]!;
    if (quote !== "'" && quote !== '"' && quote !== '`' && quote !== '[') {
      yield i;
      i += 1;
      continue;
    }
    // Skip to just past the closing quote; inside, a doubled quote is the quote itself ([…] has none).
    const close = quote === '[' ? ']' : quote;
    for (i += 1; sql[i] !== close || (close !== ']' && sql[i + 1] === close); i += sql[i] === close ? 2 : 1) {
      if (i >= sql.length) throw new Error('unterminated quote in the orders table definition');
    }
    i += 1;
  }
}

/** The index of the parenthesis that closes the one at `open`. */
function matchingParen(sql: string, open: number): number {
  let depth = 0;
  for (const i of unquoted(sql, open)) {
    if (sql[i] === '(') depth += 1;
    else if (sql[i] === ')' && (depth -= 1) === 0) return i;
  }
  throw new Error('unbalanced parentheses in the orders table definition');
}
