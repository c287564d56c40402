/**
 * The contract's `date-time` format, exactly as ajv-formats (full mode) defines it, without its
 * allocations: ajv-formats splits the string, runs two regexes and converts the parts, which costs
 * more than the rest of an Order's check together; this tests one regex and reads the numbers
 * from character codes. Proven to agree with ajv-formats' own function on thousands of generated
 * edge cases (tests/date-time.test.ts), so every place that checks a date-time agrees.
 *
 * The rules: `YYYY-MM-DD`, then `T`, `t` or one whitespace character, then `HH:MM:SS`, an optional
 * fraction, and a time zone (`Z`, `z`, `±HH`, `±HHMM` or `±HH:MM`, hours ≤ 23, minutes ≤ 59); a real
 * calendar day; hours ≤ 23, minutes ≤ 59, seconds < 60, or a leap second at 23:59 UTC.
 */
export function isDateTime(value: string): boolean {
  if (!SHAPE.test(value)) return false;
  const length = value.length;
  let sign = 1;
  let zoneHours = 0;
  let zoneMinutes = 0;
  const last = value.charCodeAt(length - 1);
  if (last !== UPPER_Z && last !== LOWER_Z) {
    // The shape leaves three places for the offset's sign: ±HH, ±HHMM, ±HH:MM.
    const at = isSign(value, length - 3) ? length - 3 : isSign(value, length - 5) ? length - 5 : length - 6;
    sign = value.charCodeAt(at) === MINUS ? -1 : 1;
    zoneHours = number(value, at + 1);
    if (length - at === 5) zoneMinutes = number(value, at + 3);
    else if (length - at === 6) zoneMinutes = number(value, at + 4);
  }

  const year = number(value, 0) * 100 + number(value, 2);
  const month = number(value, 5);
  const day = number(value, 8);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;

  const hour = number(value, 11);
  const minute = number(value, 14);
  const second = number(value, 17);
  if (zoneHours > 23 || zoneMinutes > 59) return false;
  if (hour <= 23 && minute <= 59 && second <= 59) return true;
  // A leap second, as ajv-formats computes it: 23:59 in UTC, seconds below 61.
  const utcMinute = minute - zoneMinutes * sign;
  const utcHour = hour - zoneHours * sign - (utcMinute < 0 ? 1 : 0);
  return (utcHour === 23 || utcHour === -1) && (utcMinute === 59 || utcMinute === -1) && second <= 60;
}

/**
 * The shape of ajv-formats' date-time: its DATE and TIME patterns joined by its separator, `t` or
 * `\s` (ajv-formats splits on `/t|\s/i`; JavaScript's `\s` here is the same set), time zone required.
 */
const SHAPE = /^\d{4}-\d\d-\d\d[Tt\s]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d(?::?\d\d)?)$/;
const PLUS = 0x2b;
const MINUS = 0x2d;
const UPPER_Z = 0x5a;
const LOWER_Z = 0x7a;
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isSign(value: string, at: number): boolean {
  const code = value.charCodeAt(at);
  return code === PLUS || code === MINUS;
}

/** The two-digit number at `from` (already known to be digits). */
function number(value: string, from: number): number {
  return (value.charCodeAt(from) - 0x30) * 10 + value.charCodeAt(from + 1) - 0x30;
}

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS[month]!;
}

/** Added to every instant key's seconds, so that each has twelve digits; the stores' SQL adds the same. */
export const INSTANT_KEY_BASE = 100_000_000_000;

/**
 * A key that orders valid date-times by the instant they name: comparing two keys as strings
 * compares their instants exactly, whatever their offsets and however long their fractions. The
 * stores keep the same key beside every ship date (instantKeySql in src/store/date-time-sql.ts,
 * proven equal to this on the date-time edge cases), so a shipDate filter compares keys.
 * Seconds count on a UTC timeline shifted by 400 years, so that year 0000 needs no sign; a leap
 * second is the first second of the next minute, as the stores count it.
 */
export function instantKey(value: string): string {
  let zone = 6;
  const last = value.charCodeAt(value.length - 1);
  if (last === UPPER_Z || last === LOWER_Z) zone = 1;
  else if (isSign(value, value.length - 3)) zone = 3;
  else if (isSign(value, value.length - 5)) zone = 5;
  let offset = 0;
  if (zone > 1) {
    const at = value.length - zone;
    const minutes = number(value, at + 1) * 60 + (zone > 3 ? number(value, value.length - 2) : 0);
    offset = (value.charCodeAt(at) === MINUS ? -1 : 1) * minutes * 60;
  }
  const month = number(value, 5);
  const year = number(value, 0) * 100 + number(value, 2) + 400 - (month <= 2 ? 1 : 0);
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + number(value, 8) - 1;
  const days = era * 146097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  const seconds = days * 86400 + number(value, 11) * 3600 + number(value, 14) * 60 + number(value, 17) - offset + INSTANT_KEY_BASE;
  const fraction = value.charCodeAt(19) === DOT ? value.slice(20, value.length - zone).replace(/0+$/, '') : '';
  return `${seconds}.${fraction}`;
}

const DOT = 0x2e;

let clockMs = Number.NaN;
let clockIso = '';

/**
 * Now, as `new Date().toISOString()` writes it: made once a millisecond and handed to every caller
 * within it, since every keyed request reads the clock to check its key's expiry, and a turn of the
 * event loop serves many requests in one millisecond. A clock set back is read afresh.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== clockMs) {
    clockIso = new Date(ms).toISOString();
    clockMs = ms;
  }
  return clockIso;
}
