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
 * `count` counts `n` requests of the key named `$1` in the current window of every unit (`n` given
 * once for each unit, `$2` to `$5`, as SQLite takes each placeholder once), unless the window of
 * some unit has no room for all of them (`$6` per second, `$7` per minute, `$8` per hour, `$9` per
 * day; a unit without a policy is given a quota never reached): one upsert, so that the check and
 * the count are one atomic step in every instance (the row's lock on PostgreSQL, the write lock on
 * SQLite), and a refused count changes nothing. `n` is at most every quota, so that a new row or a
 * new window always has room. It answers the windows after the count and the clock's `now`, or no
 * row when it refused; `read` then answers them as they stand.
 */
export function rateSql(clock: string): RateSql {
  const starts = USAGE_UNITS.map((unit) => (RATE_UNITS[unit] === 1 ? clock : `${clock} - ${clock} % ${RATE_UNITS[unit]}`));
  const columns = USAGE_UNITS.map((unit) => USAGE_COLUMNS[unit]);
  const set = columns
    .map(
      (column) =>
        `${column}_used = CASE WHEN u.${column}_start = excluded.${column}_start THEN u.${column}_used + excluded.${column}_used ELSE excluded.${column}_used END, ${column}_start = excluded.${column}_start`,
    )
    .join(',\n      ');
  const room = columns
    .map((column, i) => `(u.${column}_start <> excluded.${column}_start OR u.${column}_used + excluded.${column}_used <= $${i + 6})`)
    .join(' AND ');
  return {
    count: `INSERT INTO key_usage AS u (key_name, ${USAGE_RETURNING})
      VALUES ($1, ${starts.map((start, i) => `${start}, $${i + 2}`).join(', ')})
    ON CONFLICT (key_name) DO UPDATE SET
      ${set}
    WHERE ${room}
    RETURNING ${USAGE_RETURNING}, ${clock} AS now`,
    read: `SELECT ${USAGE_RETURNING}, ${clock} AS now FROM key_usage WHERE key_name = $1`,
  };
}

/** The values of rateSql's `count`: `n` requests of the named key, against the quotas of quotaValues. */
function countValues(keyName: string, n: number, quotas: readonly number[]): unknown[] {
  return [keyName, n, n, n, n, ...quotas];
}

/** The quota of each unit in rateSql's order, or one never reached. */
function quotaValues(quotas: Partial<Record<RateUnit, number>>): number[] {
  return USAGE_UNITS.map((unit) => quotas[unit] ?? Number.MAX_SAFE_INTEGER);
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

/** One request to count: its key's name and the key's quotas by unit. */
export interface CountRequest {
  readonly keyName: string;
  readonly quotas: Partial<Record<RateUnit, number>>;
}

/**
 * Counts one request of the named key against `quotas` with `sql` (rateSql): admitted, with the
 * windows its count answered; else refused and uncounted, with the windows as they stand.
 */
export function* countSteps(sql: RateSql, keyName: string, quotas: Partial<Record<RateUnit, number>>): Steps<RateCount> {
  const [counted] = (yield { rows: statement(sql.count, countValues(keyName, 1, quotaValues(quotas))) }) ?? [];
  if (counted !== undefined) return { admitted: true, windows: rateWindowsOf(counted) };
  const [row] = (yield { rows: statement(sql.read, [keyName]) }) ?? [];
  if (row === undefined) throw new StoreInvariantError(`the count of key "${keyName}" refused a request but has no row`);
  return { admitted: false, windows: rateWindowsOf(row) };
}

/**
 * Counts requests made together, each as countSteps would, in fewer statements: the requests of
 * one key and quotas are counted by one statement when there is room for all of them (as many at a
 * time as the smallest quota, so that a new window has room), and one at a time from the first
 * statement that finds none, or from the start when the smallest quota is below two. All of them
 * admitted at once, the k-th is told the count that admitting it alone would have left: the windows
 * after the statement, less the requests after it.
 * As exact as countSteps: each statement is atomic, and one that finds no room changes nothing,
 * so going on one at a time after it is what countSteps would have done. Where nothing else counts
 * meanwhile (SQLite's batch holds the write lock), a key's requests are admitted in the order given.
 */
export function* countAllSteps(sql: RateSql, requests: readonly CountRequest[]): Steps<RateCount[]> {
  const counts: RateCount[] = [];
  /** Each key's requests, by key and quotas: the first of them, and the places of all in `requests`, in order. */
  const groups = new Map<string, { first: CountRequest; places: number[] }>();
  for (const [place, request] of requests.entries()) {
    const group = `${request.keyName}\u0000${quotaValues(request.quotas).join(',')}`;
    const found = groups.get(group);
    if (found === undefined) groups.set(group, { first: request, places: [place] });
    else found.places.push(place);
  }
  for (const {
    first: { keyName, quotas },
    places,
  } of groups.values()) {
    const values = quotaValues(quotas);
    const most = Math.floor(Math.min(...values));
    let done = 0;
    while (most > 1 && places.length - done > 1) {
      const n = Math.min(places.length - done, most);
      const [counted] = (yield { rows: statement(sql.count, countValues(keyName, n, values)) }) ?? [];
      if (counted === undefined) break;
      const windows = rateWindowsOf(counted);
      for (const [k, place] of places.slice(done, done + n).entries())
        counts[place] = { admitted: true, windows: less(windows, n - 1 - k) };
      done += n;
    }
    for (const place of places.slice(done)) counts[place] = yield* countSteps(sql, keyName, quotas);
  }
  return counts;
}

/** The windows with `requests` fewer counted in each unit. */
function less(windows: RateWindows, requests: number): RateWindows {
  if (requests === 0) return windows;
  const window = (unit: RateUnit) => ({ start: windows[unit].start, used: windows[unit].used - requests });
  return { now: windows.now, s: window('s'), min: window('min'), h: window('h'), day: window('day') };
}
