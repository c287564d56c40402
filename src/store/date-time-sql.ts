import { INSTANT_KEY_BASE } from '../contract/date-time';
/** The SQL dialects whose CHECK constraints this module writes. */
export type SqlDialect = 'sqlite' | 'postgres';

/**
 * Whitespace that ajv-formats accepts between date and time (it splits on `/t|\s/i`): JavaScript's
 * `\s`, as code points.
 */
const SEPARATOR_SPACES = [9, 10, 11, 12, 13, 32, 0xa0, 0x1680, ...range(0x2000, 0x200a), 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];

/**
 * A boolean SQL expression that is true exactly when `column` holds a string that the contract's
 * `date-time` format accepts (ajv-formats in full mode): an RFC 3339 date-time with a time zone, on
 * a real calendar day (leap years included), hours 00–23, minutes and seconds 00–59 (60 for a leap
 * second at 23:59 UTC, as ajv-formats computes it), an optional fraction, and `Z` or an offset of
 * `±HH`, `±HHMM` or `±HH:MM`. Written for both stores from the same parts, so that they agree.
 * Every cast is guarded by the shape check before it, because PostgreSQL raises on a bad cast.
 */
export function dateTimeCheckSql(column: string, dialect: SqlDialect): string {
  const s = column;
  const glob = (expr: string, pattern: string): string =>
    dialect === 'sqlite' ? `${expr} GLOB '${pattern}'` : `${expr} ~ '${globToRegex(pattern)}'`;
  const chr = (code: number): string => (dialect === 'sqlite' ? `char(${code})` : `chr(${code})`);
  const int = (expr: string): string => `CAST(${expr} AS INTEGER)`;
  const end = (offset: number, length: number): string => `substr(${s}, length(${s}) - ${offset}, ${length})`;
  const never = '1 = 0';

  // The length of the time zone at the end: Z (1), ±HH (3), ±HHMM (5), ±HH:MM (6); 0 for none.
  const zone = `(CASE WHEN ${end(0, 1)} IN ('Z', 'z') THEN 1
    WHEN ${glob(end(2, 3), '[+-][0-9][0-9]')} THEN 3
    WHEN ${glob(end(4, 5), '[+-][0-9][0-9][0-9][0-9]')} THEN 5
    WHEN ${glob(end(5, 6), '[+-][0-9][0-9]:[0-9][0-9]')} THEN 6 ELSE 0 END)`;
  // Between the seconds and the zone: nothing, or a dot and one or more digits.
  const fraction = `substr(${s}, 20, length(${s}) - 19 - ${zone})`;
  const shape = [
    `length(${s}) BETWEEN 20 AND 64`,
    glob(`substr(${s}, 1, 10)`, '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    `substr(${s}, 11, 1) IN ('T', 't', ${SEPARATOR_SPACES.map(chr).join(', ')})`,
    glob(`substr(${s}, 12, 8)`, '[0-9][0-9]:[0-9][0-9]:[0-9][0-9]'),
    `${zone} > 0`,
    `length(${s}) >= 19 + ${zone}`,
    `(${fraction} = '' OR (substr(${fraction}, 1, 1) = '.' AND length(${fraction}) >= 2 AND NOT ${glob(`substr(${fraction}, 2)`, '*[^0-9]*')}))`,
  ].join('\n    AND ');

  const year = int(`substr(${s}, 1, 4)`);
  const month = int(`substr(${s}, 6, 2)`);
  const day = int(`substr(${s}, 9, 2)`);
  const hour = int(`substr(${s}, 12, 2)`);
  const minute = int(`substr(${s}, 15, 2)`);
  const second = int(`substr(${s}, 18, 2)`);
  const zoneHours = `(CASE WHEN ${zone} > 1 THEN ${int(`substr(${s}, length(${s}) - ${zone} + 2, 2)`)} ELSE 0 END)`;
  const zoneMinutes = `(CASE WHEN ${zone} > 3 THEN ${int(end(1, 2))} ELSE 0 END)`;
  const sign = `(CASE WHEN substr(${s}, length(${s}) - ${zone} + 1, 1) = '-' THEN -1 ELSE 1 END)`;
  const leap = `(${year} % 4 = 0 AND (${year} % 100 <> 0 OR ${year} % 400 = 0))`;
  const daysInMonth = `(CASE WHEN ${month} = 2 THEN (CASE WHEN ${leap} THEN 29 ELSE 28 END) WHEN ${month} IN (4, 6, 9, 11) THEN 30 ELSE 31 END)`;
  const utcMinute = `(${minute} - ${zoneMinutes} * ${sign})`;
  const utcHour = `(${hour} - ${zoneHours} * ${sign} - (CASE WHEN ${utcMinute} < 0 THEN 1 ELSE 0 END))`;
  const values = [
    `${month} BETWEEN 1 AND 12`,
    `${day} BETWEEN 1 AND ${daysInMonth}`,
    `${zoneHours} <= 23`,
    `${zoneMinutes} <= 59`,
    `((${hour} <= 23 AND ${minute} <= 59 AND ${second} <= 59)
      OR (${second} <= 60 AND ${utcHour} IN (23, -1) AND ${utcMinute} IN (59, -1)))`,
  ].join('\n    AND ');

  return `(CASE WHEN ${shape}\n  THEN (${values})\n  ELSE ${never} END)`;
}

/** A GLOB pattern of literals, `[...]` classes and `*`, as an anchored POSIX regex. */
function globToRegex(pattern: string): string {
  let regex = '^';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    if (char === '*') regex += '.*';
    else if (char === '[') {
      const close = pattern.indexOf(']', i + 2);
      regex += pattern.slice(i, close + 1);
      i = close;
    } else regex += /[.+?^$(){}|\\]/.test(char) ? `\\${char}` : char;
  }
  return `${regex}$`;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * A text SQL expression that orders a valid `date-time` in `column` by the instant it names (the
 * stored text keeps its own offset, so its text order is not time order): twelve digits of seconds
 * on a shifted UTC timeline, a dot, and the fraction's digits without trailing zeros, so that
 * comparing two keys as text compares their instants exactly, to the last digit of either
 * fraction. The same integer arithmetic in both dialects (days from the civil date, no date
 * functions: PostgreSQL has no year 0 and SQLite no leap second), all of it immutable, so that
 * PostgreSQL can store it as a generated column. instantKey (src/contract/date-time.ts) computes
 * the same key in JavaScript, for the filters a request sends.
 */
export function instantKeySql(column: string): string {
  const s = column;
  const int = (expr: string): string => `CAST(${expr} AS BIGINT)`;
  const sign = (at: string): string => `substr(${s}, ${at}, 1) IN ('+', '-')`;
  // The time zone's length, for a string that is a valid date-time: Z (1), ±HH (3), ±HHMM (5), ±HH:MM (6).
  const zone = `(CASE WHEN substr(${s}, length(${s}), 1) IN ('Z', 'z') THEN 1
    WHEN ${sign(`length(${s}) - 2`)} THEN 3 WHEN ${sign(`length(${s}) - 4`)} THEN 5 ELSE 6 END)`;
  const zoneSign = `(CASE WHEN substr(${s}, length(${s}) - ${zone} + 1, 1) = '-' THEN -1 ELSE 1 END)`;
  const zoneHours = `(CASE WHEN ${zone} > 1 THEN ${int(`substr(${s}, length(${s}) - ${zone} + 2, 2)`)} ELSE 0 END)`;
  const zoneMinutes = `(CASE WHEN ${zone} > 3 THEN ${int(`substr(${s}, length(${s}) - 1, 2)`)} ELSE 0 END)`;
  // Years shifted by 400 (one Gregorian cycle), March-based, so that every division is of a positive number.
  const month = int(`substr(${s}, 6, 2)`);
  const year = `(${int(`substr(${s}, 1, 4)`)} + 400 - (CASE WHEN ${month} <= 2 THEN 1 ELSE 0 END))`;
  const yearOfEra = `(${year} - (${year} / 400) * 400)`;
  const dayOfYear = `((153 * (${month} + (CASE WHEN ${month} > 2 THEN -3 ELSE 9 END)) + 2) / 5 + ${int(`substr(${s}, 9, 2)`)} - 1)`;
  const days = `((${year} / 400) * 146097 + ${yearOfEra} * 365 + ${yearOfEra} / 4 - ${yearOfEra} / 100 + ${dayOfYear})`;
  const seconds =
    `(${days} * 86400 + ${int(`substr(${s}, 12, 2)`)} * 3600 + ${int(`substr(${s}, 15, 2)`)} * 60 + ${int(`substr(${s}, 18, 2)`)}` +
    ` - ${zoneSign} * (${zoneHours} * 3600 + ${zoneMinutes} * 60) + ${INSTANT_KEY_BASE})`;
  const fraction = `(CASE WHEN substr(${s}, 20, 1) = '.' THEN rtrim(substr(${s}, 21, length(${s}) - 20 - ${zone}), '0') ELSE '' END)`;
  return `(CAST(${seconds} AS TEXT) || '.' || ${fraction})`;
}

/**
 * A POSIX regular expression for the digits instantKeySql reads, where it reads them: what a value
 * needs for every cast in the key to be of digits (the CHECK decides whether it is a date-time).
 */
export const DATE_TIME_DIGITS = '^[0-9]{4}-[0-9]{2}-[0-9]{2}.[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)$';
