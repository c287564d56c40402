import { INSTANT_KEY_BASE } from '../date-time';
import type { DateTimeSpelling, Dialect } from './dialect';

/**
 * Whitespace that ajv-formats accepts between date and time (it splits on `/t|\s/i`): JavaScript's
 * `\s`, as code points.
 */
const SEPARATOR_SPACES = [9, 10, 11, 12, 13, 32, 0xa0, 0x1680, ...range(0x2000, 0x200a), 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];

/**
 * A boolean SQL expression that is true exactly when `column` holds a string that the contract's
 * `date-time` format accepts (ajv-formats in full mode, at most 64 characters), laid out to be read
 * in the schema, a part per line: an RFC 3339 date, `T` or whitespace, a time, an optional
 * fraction, and `Z` or an offset of `±HH`, `±HHMM` or `±HH:MM`; then a real calendar day, a zone
 * within a day, and hours 00–23, minutes and seconds 00–59. Like ajv-formats, it also takes a
 * time off the clock when that is the last minute of a UTC day with seconds up to 60: a leap
 * second, with its quirks (`24:59:59+01:00` is 23:59:59 UTC). Every cast comes after the shape
 * that makes it safe, because PostgreSQL raises on a bad cast. tests/store/date-time-check.test.ts holds
 * it to the validator on both stores.
 */
export function shipDateRule(column: string, { dateTime: sql }: Dialect): string {
  const s = column;
  // What follows the seconds and their fraction: the zone, when the string ends as it should.
  const zone = `ltrim(substr(${s}, 20), '.0123456789')`;
  const sign = `(CASE WHEN ${zone} LIKE '-%' THEN -1 ELSE 1 END)`;
  const zoneHours = sql.integer(`'0' || substr(${zone}, 2, 2)`);
  const zoneMinutes = sql.integer(`'0' || substr(replace(${zone}, ':', ''), 4, 2)`);
  const hour = sql.integer(`substr(${s}, 12, 2)`);
  const minute = sql.integer(`substr(${s}, 15, 2)`);
  const usual = sql.usualForms(s);
  return `(CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ${usual.when}
  THEN ${usual.then}
  -- any other
  WHEN length(${s}) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND ${sql.glob(`substr(${s}, 1, 19)`, `${digits(4)}-${digits(2)}-${digits(2)}?${digits(2)}:${digits(2)}:${digits(2)}`)}
    -- between date and time: T, t or whitespace (JavaScript's \\s)
    AND ${sql.oneOf(`substr(${s}, 11, 1)`, [84, 116, ...SEPARATOR_SPACES])}
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (${sql.glob(`substr(${s}, 20)`, '[Zz+-]*')} OR (${sql.glob(`substr(${s}, 20)`, '.[0-9]*')} AND ${sql.glob(`ltrim(substr(${s}, 21), '0123456789')`, '[Zz+-]*')}))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (${zone} IN ('Z', 'z') OR ${[`[+-]${digits(2)}`, `[+-]${digits(2)}[0-5][0-9]`, `[+-]${digits(2)}:[0-5][0-9]`].map((p) => sql.glob(zone, p)).join(' OR ')})
  THEN
    -- a real calendar day
    ${sql.realDay(`substr(${s}, 1, 10)`)}
    -- a zone within a day
    AND substr(${zone}, 2, 2) <= '23'
    -- a clock time
    AND ((substr(${s}, 12, 2) <= '23' AND substr(${s}, 15, 2) <= '59' AND substr(${s}, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(${s}, 18, 2) <= '60'
        AND ${minute} - ${sign} * ${zoneMinutes} IN (59, -1)
        AND ${hour} * 60 + ${minute} - ${sign} * (${zoneHours} * 60 + ${zoneMinutes}) IN (1439, -1)))
  ELSE FALSE END)`;
}

/**
 * DateTimeSpelling's usualForms from its glob and realDay: the two forms' shapes, with each digit
 * that has a range narrowed by its first place (months [01], days [0-3], hours [0-2], minutes and
 * seconds [0-5]); then a real day and hours to 23.
 */
export function usualFormsByGlob(s: string, sql: DateTimeSpelling): { when: string; then: string } {
  const usual = (fraction: string): string => `${digits(4)}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]${fraction}Z`;
  return {
    when: `${sql.glob(s, usual(''))} OR ${sql.glob(s, usual(`.${digits(3)}`))}`,
    then: `${sql.realDay(`substr(${s}, 1, 10)`)} AND substr(${s}, 12, 2) <= '23'`,
  };
}

function digits(n: number): string {
  return '[0-9]'.repeat(n);
}

/** A GLOB pattern of literals, `?`, `[...]` classes and `*`, as an anchored POSIX regex. */
export function globToRegex(pattern: string): string {
  let regex = '^';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    if (char === '*') regex += '.*';
    else if (char === '?') regex += '.';
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
 * PostgreSQL can store it as a generated column. instantKey (src/date-time.ts) computes
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
