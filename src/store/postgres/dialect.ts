import type { PoolClient } from 'pg';
import { globToRegex } from '../date-time-sql';
import { queryableThrough, type Connection, type Dialect, type Queryable, type Row, type Statement } from '../dialect';
import { isRecord } from '../../records';
import pg from 'pg';
import { errorCode, messageOf } from '../../thrown';
import { StoreUnavailableError } from '../errors';

/** The days of each month of a leap year, two digits each, January first. */
const MONTH_DAYS = '312931303130313130313031';

/** PostgreSQL, through pg: `$n` placeholders as written, regular expressions, and no year 0 in its own dates. */
export const postgresDialect: Dialect = {
  placeholders: (sql) => sql,
  ddl: {
    integer: 'BIGINT',
    serial: 'BIGSERIAL',
    randomId: 'substr(md5(random()::text || clock_timestamp()::text), 1, 16)',
    boolean: () => 'BOOLEAN NOT NULL',
    tableOptions: '',
  },
  // now() is the start of the statement's transaction: one statement, one instant.
  clock: 'floor(extract(epoch FROM now()))::bigint',
  eventPlace: { tx: 'xid::text', order: 'xid, seq' },
  dateTime: {
    glob: (expr, pattern) => `${expr} ~ '${globToRegex(pattern)}'`,
    oneOf: (expr, codes) => `strpos(${codes.map((code) => `chr(${code})`).join(' || ')}, ${expr}) > 0`,
    // PostgreSQL's own dates have no year 0 and raise on a day that does not exist, so the calendar
    // is spelled out: the month's days (February's 29 only in a leap year).
    realDay: (expr) => `(substr(${expr}, 6, 2) BETWEEN '01' AND '12'
      AND substr(${expr}, 9, 2) BETWEEN '01' AND substr('${MONTH_DAYS}', 2 * CAST(substr(${expr}, 6, 2) AS INTEGER) - 1, 2)
      AND ${leapDayInLeapYear(expr)})`,
    integer: (expr) => `CAST(${expr} AS INTEGER)`,
    // One regular expression takes the usual forms whose every field is in range, the month's
    // days included; only a 29th of February is left to its year. What it leaves, the rule's other
    // clauses judge. Cheaper than glob and realDay, a cost an import pays per row (docs/performance-log.md).
    usualForms: (expr) => ({ when: `${expr} ~ '${USUAL_FORMS}'`, then: leapDayInLeapYear(expr) }),
  },
  translate: translate,
  uniqueViolation: (err) => {
    if (sqlState(err) !== '23505' || !isRecord(err) || typeof err.table !== 'string' || typeof err.detail !== 'string') return undefined;
    // "Key (name)=(ci) already exists."
    const column = /^Key \(([^)]+)\)=/.exec(err.detail)?.[1];
    return column === undefined ? undefined : `${err.table}.${column}`;
  },
};

/** The usual forms, `YYYY-MM-DDTHH:MM:SSZ` and with milliseconds, with a day the month has (February's 29th in any year). */
const USUAL_FORMS = `^[0-9]{4}-(${[
  '(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])', // months of 31 days
  '(0[469]|11)-(0[1-9]|[12][0-9]|30)', // of 30
  '02-(0[1-9]|[12][0-9])', // February
].join('|')})T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{3})?Z$`;

/** False only for a 29th of February in a year that is not a leap year, for a date `YYYY-MM-DD…` in `expr`. */
function leapDayInLeapYear(expr: string): string {
  const year = `CAST(substr(${expr}, 1, 4) AS INTEGER)`;
  return `(substr(${expr}, 6, 5) <> '02-29' OR (${year} % 4 = 0 AND (${year} % 100 <> 0 OR ${year} % 400 = 0)))`;
}

/** The name each statement text is prepared under, on every connection that runs it. */
const PREPARED = new Map<string, string>();
/** Most statement texts prepared: past it, a new text runs unprepared (a bound on what each connection keeps). */
export const MOST_PREPARED = 256;

/**
 * A statement as pg runs it: one with values is prepared under a name of its own, once per
 * connection, so that PostgreSQL parses and plans it once and afterwards only binds and runs it
 * (what that saves a one-order read is in docs/performance.md).
 * A statement without values is sent as it is, as pg's simple query, which may hold several.
 */
export function prepared(text: string, values: readonly unknown[]): pg.QueryConfig;
export function prepared(text: string, values: readonly unknown[], rowMode: 'array'): pg.QueryArrayConfig;
export function prepared(text: string, values: readonly unknown[], rowMode?: 'array'): pg.QueryConfig | pg.QueryArrayConfig {
  const config: pg.QueryConfig & { rowMode?: 'array' } = values.length === 0 ? { text } : { text, values: [...values] };
  if (rowMode !== undefined) config.rowMode = rowMode;
  if (values.length === 0) return config;
  let name = PREPARED.get(text);
  if (name === undefined && PREPARED.size < MOST_PREPARED) PREPARED.set(text, (name = `petstore_${PREPARED.size}`));
  if (name !== undefined) config.name = name;
  return config;
}

/** A pg client or pool, as the shared algorithms drive it: each step one statement, so one round trip. */
export function postgresQueryable(client: Pick<PoolClient, 'query'>): Queryable {
  const rows = async ({ text, values }: Statement) => (await client.query<Row>(prepared(text, values))).rows;
  return {
    run: async (statement) => void (await rows(statement)),
    rows,
    fused: (writes, read) => rows(fusedStatement(writes, read)),
  };
}

/**
 * Statements as one: each write a data-modifying WITH query, then `read` (none: a row of nothing).
 * They share one snapshot, so `read` does not see the writes, and no write may read another's rows.
 */
export function fusedStatement(writes: readonly Statement[], read: Statement | undefined): Statement {
  const values: unknown[] = [];
  const renumbered = ({ text, values: own }: Statement): string => {
    const offset = values.length;
    values.push(...own);
    return text.replace(/\$(\d+)/g, (_match, n: string) => `$${Number(n) + offset}`);
  };
  const withs = writes.map((write, i) => `w${i} AS (${renumbered(write)})`).join(', ');
  const main = read === undefined ? 'SELECT 1 AS done' : renumbered(read);
  return { text: writes.length === 0 ? main : `WITH ${withs} ${main}`, values };
}

/** A pg pool, as the shared algorithms drive it, with an unreachable database turned into StoreUnavailableError. */
export function guardedQueryable(pool: Pick<PoolClient, 'query'>): Queryable {
  return queryableThrough(postgresQueryable(pool), (operation) => guard(async () => operation()));
}

/** A pg client, as the shared algorithms drive it. */
export function postgresConnection(client: PoolClient): Connection {
  return {
    ...postgresQueryable(client),
    exclusively: async (lock, body) => {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [lock.toString()]);
        const result = await body();
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
  };
}

/**
 * SQLSTATE classes and codes that mean "the database cannot serve right now", not "this request
 * is wrong": connection exceptions (08), insufficient resources (53), operator intervention such
 * as a restart or pg_terminate_backend (57P01-57P05), a statement timeout (57014), and a lock
 * or serialization conflict that outlived its wait (55P03, 40001, 40P01).
 */
const UNAVAILABLE_STATE = /^(08|53|57P0[1-5]$|57014$|55P03$|40001$|40P01$)/;

/** Node's codes for a network connection that failed, was refused or went away. */
const NETWORK_CODE = /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/;

/** The SQLSTATE of a PostgreSQL error, or undefined. */
export function sqlState(err: unknown): string | undefined {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Turns an error meaning "the database cannot serve" into StoreUnavailableError; returns others
 * as they are. Told apart by type, never by message:
 * - the server's own errors are DatabaseErrors, with a SQLSTATE (UNAVAILABLE_STATE);
 * - a failed socket is a Node error with a network code;
 * - node-postgres and its pool raise a plain `Error`, with no code, when a connection fails or
 *   ends (terminated, not queryable, a connect timeout, a pool that has ended). This store's own
 *   errors each have a class of their own, and a mistake in code is a TypeError or the like, so a
 *   plain Error here is the driver's.
 */
export function translate(err: unknown): unknown {
  // By shape rather than `instanceof Error`: Node's own errors come from its realm, which is not
  // always the one this module runs in (a test sandbox).
  const message = messageOf(err);
  if (err instanceof StoreUnavailableError || typeof err !== 'object' || err === null || message === undefined) return err;
  let reason: string | undefined;
  const state = sqlState(err);
  if (state !== undefined) {
    if (UNAVAILABLE_STATE.test(state)) reason = state;
  } else {
    const code = errorCode(err);
    if (code !== undefined && NETWORK_CODE.test(code)) reason = code;
    else if (('code' in err ? err.code : undefined) === undefined && err.constructor.name === 'Error') reason = 'connection';
  }
  return reason === undefined ? err : new StoreUnavailableError(`${reason}: ${message}`, { cause: err });
}

/** Runs a database operation, turning an unreachable database into StoreUnavailableError. */
export async function guard<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw translate(err);
  }
}

/**
 * Runs `body` on a connection of the pool of its own: a transaction it began that is still open
 * when it throws is rolled back, and a connection that failed under it is not given back to the
 * pool. Its error as the store reports it (translate).
 */
export async function withClient<T>(pool: pg.Pool, body: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await guard(() => pool.connect());
  let broken = false;
  try {
    return await body(client);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const translated = translate(err);
    broken = translated !== err;
    throw translated;
  } finally {
    client.release(broken);
  }
}
