import type { PoolClient } from 'pg';
import { globToRegex } from '../date-time-sql';
import type { Connection, Dialect, Row } from '../dialect';
import { isRecord } from '../../records';
import { sqlState, translatePg } from './errors';

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
  translate: translatePg,
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

/** A pg client, as the shared algorithms drive it. */
export function postgresConnection(client: PoolClient): Connection {
  return {
    run: async ({ text, values }) => {
      await client.query(text, [...values]);
    },
    rows: async ({ text, values }) => (await client.query<Row>(text, [...values])).rows,
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
