import { RATE_UNITS, type RateUnit } from '../rate-policy';
import { statement, type Row, type Steps } from './dialect';
import { StoreInvariantError } from './errors';
import type { RateCount, RateWindows } from './types';

// A key's rate-limit count, as every store keeps it: exact across every instance on the store.

/** The units in the order key_usage's statements name them, and each one's columns' prefix. */
const USAGE_UNITS: readonly RateUnit[] = ['s', 'min', 'h', 'day'];
const USAGE_COLUMNS: { readonly [U in RateUnit]: string } = { s: 'second', min: 'minute', h: 'hour', day: 'day' };
const USAGE_RETURNING = USAGE_UNITS.map((unit) => `${USAGE_COLUMNS[unit]}_start, ${USAGE_COLUMNS[unit]}_used`).join(', ');

/**
 * The statements of a key's rate-limit count, with the database's clock (`clock`, whole seconds).
 * `count` counts one request of the key named `$1` in the current window of every unit, unless the
 * window of some unit already holds its quota (`$2` per second, `$3` per minute, `$4` per hour,
 * `$5` per day; a unit without a policy is given a quota never reached): one upsert, so that the
 * check and the count are one atomic step in every instance (the row's lock on PostgreSQL, the
 * write lock on SQLite), and a refused request changes nothing. It answers the windows after the
 * count and the clock's `now`, or no row when it refused; `read` then answers them as they stand.
 */
export function rateSql(clock: string): RateSql {
  const starts = USAGE_UNITS.map((unit) => (RATE_UNITS[unit] === 1 ? clock : `${clock} - ${clock} % ${RATE_UNITS[unit]}`));
  const columns = USAGE_UNITS.map((unit) => USAGE_COLUMNS[unit]);
  const set = columns
    .map(
      (column) =>
        `${column}_used = CASE WHEN u.${column}_start = excluded.${column}_start THEN u.${column}_used + 1 ELSE 1 END, ${column}_start = excluded.${column}_start`,
    )
    .join(',\n      ');
  const room = columns.map((column, i) => `(u.${column}_start <> excluded.${column}_start OR u.${column}_used < $${i + 2})`).join(' AND ');
  return {
    count: `INSERT INTO key_usage AS u (key_name, ${USAGE_RETURNING})
      VALUES ($1, ${starts.map((start) => `${start}, 1`).join(', ')})
    ON CONFLICT (key_name) DO UPDATE SET
      ${set}
    WHERE ${room}
    RETURNING ${USAGE_RETURNING}, ${clock} AS now`,
    read: `SELECT ${USAGE_RETURNING}, ${clock} AS now FROM key_usage WHERE key_name = $1`,
  };
}

/** The values of rateSql's `count` for the named key: its quota of each unit, or one never reached. */
function rateCountValues(keyName: string, quotas: Partial<Record<RateUnit, number>>): unknown[] {
  return [keyName, ...USAGE_UNITS.map((unit) => quotas[unit] ?? Number.MAX_SAFE_INTEGER)];
}

/** A row of rateSql's statements as the windows it holds (PostgreSQL gives a BIGINT as text). */
function rateWindowsOf(row: Row): RateWindows {
  const at = (column: string) => Number(row[column]);
  const window = (unit: RateUnit) => ({ start: at(`${USAGE_COLUMNS[unit]}_start`), used: at(`${USAGE_COLUMNS[unit]}_used`) });
  return { now: at('now'), s: window('s'), min: window('min'), h: window('h'), day: window('day') };
}

/** The statements of a key's rate-limit count by one database's clock (rateSql): made once per store. */
export interface RateSql {
  readonly count: string;
  readonly read: string;
}

/**
 * Counts one request of the named key against `quotas` with `sql` (rateSql): admitted, with the
 * windows its count answered; else refused and uncounted, with the windows as they stand.
 */
export function* countSteps(sql: RateSql, keyName: string, quotas: Partial<Record<RateUnit, number>>): Steps<RateCount> {
  const [counted] = (yield { rows: statement(sql.count, rateCountValues(keyName, quotas)) }) ?? [];
  if (counted !== undefined) return { admitted: true, windows: rateWindowsOf(counted) };
  const [row] = (yield { rows: statement(sql.read, [keyName]) }) ?? [];
  if (row === undefined) throw new StoreInvariantError(`the count of key "${keyName}" refused a request but has no row`);
  return { admitted: false, windows: rateWindowsOf(row) };
}
