/**
 * When a failed delivery is tried again. Per event, after each failure: 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 14 h, 20 h, 24 h (about three days in all, as Stripe's), each stretched by up to 10%
 * at random so that the retries of many events do not arrive together. A `429` or `503` that says
 * `Retry-After` waits at least that long. After the last, the event is failed for that endpoint.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The waits after each failure, in milliseconds, as shipped. */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = Object.freeze([
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
]);

/** The most a wait is stretched at random, as a share of it. */
export const JITTER = 0.1;

/**
 * How long one attempt may take, from connecting to the end of the answer's head. Kept here, with
 * delivery's other times, so that reading it (the configuration does) loads no HTTP client.
 */
export const ATTEMPT_TIMEOUT_MS = 15_000;

/** How long an endpoint may fail every attempt before it is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

/** The longest a Retry-After may hold an event back: past it, the schedule's own wait applies. */
const MAX_RETRY_AFTER_MS = 24 * HOUR;

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: 24 * HOUR };

/**
 * A schedule written as durations separated by commas (`1s,2s,5s`; units ms, s, m, h, d), as
 * PETSTORE_WEBHOOK_RETRY_SCHEDULE takes it: the waits in milliseconds, or why it is not one.
 */
export function parseSchedule(text: string): readonly number[] | { problem: string } {
  const parts = text.split(',').map((part) => part.trim());
  const waits: number[] = [];
  for (const part of parts) {
    const [, amount, unit] = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part) ?? [];
    const scale = unit === undefined ? undefined : UNITS[unit];
    if (amount === undefined || scale === undefined) return { problem: `"${part}" is not a duration such as 500ms, 5s, 5m, 2h or 1d` };
    waits.push(Number(amount) * scale);
  }
  if (waits.length > 50) return { problem: 'holds more than 50 waits' };
  return Object.freeze(waits);
}

/**
 * How long to wait before the next attempt, after `failures` failed ones (1 after the first), or
 * undefined when the schedule is spent. `random` is in [0, 1); `retryAfterMs` is what the receiver
 * asked for, if it did.
 */
export function nextWait(failures: number, schedule: readonly number[], random: number, retryAfterMs?: number): number | undefined {
  const base = schedule[failures - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 + JITTER * random));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/**
 * What a Retry-After header asks for, in milliseconds from `now`: whole seconds, or an HTTP date.
 * Undefined when it is absent or says nothing usable.
 */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * SECOND;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
