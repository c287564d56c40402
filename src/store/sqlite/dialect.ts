import type Database from 'better-sqlite3';
import type { Dialect, Row, Statement, SyncConnection } from '../dialect';
import { usualFormsByGlob } from '../date-time-sql';
import { StoreBusyError, StoreInvariantError, StoreUnavailableError } from '../errors';
import { errorCode, errorMessage, messageOf } from '../../thrown';

/** SQLite, through better-sqlite3: positional `?`, STRICT tables, GLOB, and its own date(). */
export const sqliteDialect: Dialect = {
  placeholders: sqlitePlaceholders,
  ddl: {
    integer: 'INTEGER',
    serial: 'INTEGER',
    randomId: 'lower(hex(randomblob(8)))',
    boolean: (column) => `INTEGER NOT NULL CONSTRAINT order_${column}_boolean CHECK (${column} IN (0, 1))`,
    tableOptions: ' STRICT',
  },
  // 'now' is fixed for the whole of one step of a statement.
  clock: 'unixepoch()',
  eventPlace: { tx: "'0'", order: 'seq' },
  dateTime: {
    glob: (expr, pattern) => `${expr} GLOB '${pattern}'`,
    oneOf: (expr, codes) => `instr(char(${codes.join(', ')}), ${expr}) > 0`,
    // date() gives back a real day unchanged, and moves any other (2023-02-29 is 2023-03-01) or has none.
    realDay: (expr) => `date(${expr}) IS ${expr}`,
    integer: (expr) => `CAST(${expr} AS INTEGER)`,
    usualForms: (expr) => usualFormsByGlob(expr, sqliteDialect.dateTime),
  },
  translate,
  uniqueViolation: (err) => {
    if (sqliteCode(err) !== 'SQLITE_CONSTRAINT_UNIQUE') return undefined;
    // "UNIQUE constraint failed: api_keys.name"
    return /constraint failed: (\S+)/.exec(messageOf(err) ?? '')?.[1];
  },
};

/**
 * A statement with `$1, $2, …` as SQLite's positional `?`: only for statements that use each
 * placeholder once, in order (better-sqlite3 binds `?` by position), which it checks.
 *
 * A LIMIT's placeholder becomes `+?`. SQLite (3.54, as better-sqlite3 ships it) plans a bare
 * `LIMIT ?` with the value bound to it, and so marks the statement to be prepared again whenever
 * that value is bound, which better-sqlite3 does at every run: the statement would be compiled
 * anew for each page. The unary plus makes the limit an expression the planner does not read, so
 * the statement is prepared once and keeps the plan the page-plans test checks; the limit itself
 * is the same number.
 */
export function sqlitePlaceholders(sql: string): string {
  let expected = 1;
  return sql.replace(/(LIMIT\s+)?\$(\d+)/g, (_match, limit: string | undefined, n: string) => {
    if (Number(n) !== expected) throw new StoreInvariantError(`placeholders must be $1, $2, … once each, in order: ${sql}`);
    expected += 1;
    return limit === undefined ? '?' : `${limit}+?`;
  });
}

/**
 * A better-sqlite3 connection, as the shared algorithms drive it: every step answered at once.
 * Each statement with values is prepared once per connection (`prepared`), as a request's steps
 * run again and again.
 */
export function sqliteConnection(db: Database.Database): SyncConnection {
  const prepared = new Map<string, Database.Statement<unknown[], Row>>();
  const prepare = ({ text }: Statement) => {
    let made = prepared.get(text);
    if (made === undefined) {
      made = db.prepare<unknown[], Row>(sqlitePlaceholders(text));
      prepared.set(text, made);
    }
    return made;
  };
  return {
    run: (statement) => {
      // Several statements (a migration's, each ended by ";") run as a script; one is prepared once.
      if (statement.values.length === 0 && statement.text.includes(';')) db.exec(statement.text);
      else prepare(statement).run(...statement.values);
    },
    rows: (statement) => prepare(statement).all(...statement.values),
    exclusively: (_lock, body) => db.transaction(body).immediate(),
  };
}

/**
 * The SQLite result code of an error, recognised by shape: the native addon keeps the error
 * class of the first copy of better-sqlite3 loaded in the process, so `instanceof` fails
 * wherever modules are loaded twice.
 */
export function sqliteCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('name' in err) || err.name !== 'SqliteError') return undefined;
  return errorCode(err);
}

/** SQLite result codes that mean "the store cannot serve right now", not "this request is wrong". */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT|PROTOCOL)/;

/** Turns an error meaning "the store is unreachable" into StoreUnavailableError; returns others as they are. */
export function translate(err: unknown): unknown {
  const code = sqliteCode(err);
  if (code === 'SQLITE_BUSY') return new StoreBusyError(`${code}: ${errorMessage(err)}`, { cause: err });
  if (code !== undefined && UNAVAILABLE.test(code)) return new StoreUnavailableError(`${code}: ${errorMessage(err)}`, { cause: err });
  return err;
}

/** What an operation on a closed store raises: the store checks that it is open before it asks the driver. */
export function storeClosed(): StoreUnavailableError {
  return new StoreUnavailableError('the database is closed');
}

/** Runs a store operation, turning an unreachable store into StoreUnavailableError. */
export function guard<T>(operation: () => T): T {
  try {
    return operation();
  } catch (err) {
    throw translate(err);
  }
}
