import { isDateTime } from '../date-time';

/** A key's expiry as the CLI's options give it: in a duration from now, at a time, or none. */
export interface ExpiryOptions {
  /** A whole number with `s`, `m`, `h` or `d` (`90d`). */
  expiresIn?: string | undefined;
  /** An RFC 3339 date-time, in the future. */
  expiresAt?: string | undefined;
  /** `--no-expiry`: the key never expires (`keys update` only). */
  noExpiry?: boolean | undefined;
}

const DURATION = /^(\d{1,9})(s|m|h|d)$/;
const UNIT_MS: ReadonlyMap<string, number> = new Map([
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
]);
/** The last instant kept as a four-digit year, so that every stored expiry compares as text with every other time. */
const MAX_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The time `value`, a duration (a whole number of at least `min` with s, m, h or d), after `now`, as
 * the ISO 8601 UTC time the store keeps. Throws an Error naming `option` and the value when it does
 * not parse or lies past the times kept.
 */
export function laterBy(option: string, value: string, now: Date, min: number): string {
  const match = DURATION.exec(value);
  const amount = Number(match?.[1] ?? -1);
  const unitMs = UNIT_MS.get(match?.[2] ?? '');
  if (unitMs === undefined || amount < min) {
    throw new Error(`${option} must be a whole number${min > 0 ? ` of at least ${min}` : ''} with s, m, h or d (90d), got "${value}"`);
  }
  const at = now.getTime() + amount * unitMs;
  if (at > MAX_TIME) throw new Error(`${option} is too far in the future, got "${value}"`);
  return new Date(at).toISOString();
}

/**
 * The expiry the options ask for, as the ISO 8601 UTC time the store keeps (null: never), or
 * undefined when they ask for none. Throws an Error naming the option and its value when they do
 * not parse, name a time that has passed, or ask for two things at once.
 */
export function expiryOf(options: ExpiryOptions, now: Date): string | null | undefined {
  const given = [
    options.expiresIn !== undefined && '--expires-in',
    options.expiresAt !== undefined && '--expires-at',
    options.noExpiry === true && '--no-expiry',
  ].filter((name): name is string => name !== false);
  if (given.length > 1) throw new Error(`${given.join(' and ')} cannot be given together: choose one`);
  if (options.expiresIn !== undefined) return laterBy('--expires-in', options.expiresIn, now, 1);
  if (options.expiresAt !== undefined) {
    if (!isDateTime(options.expiresAt)) {
      throw new Error(`--expires-at must be an RFC 3339 date-time (2027-01-01T00:00:00Z), got "${options.expiresAt}"`);
    }
    const at = new Date(options.expiresAt);
    if (Number.isNaN(at.getTime()) || at.getTime() > MAX_TIME) throw new Error(`--expires-at is out of range, got "${options.expiresAt}"`);
    if (at.getTime() <= now.getTime()) throw new Error(`--expires-at must be in the future, got "${options.expiresAt}"`);
    return at.toISOString();
  }
  return options.noExpiry === true ? null : undefined;
}
