import type { RateWindows } from '../store';
import { RATE_UNITS, type Policy, type RateUnit } from '../rate-policy';

/** What a request's take of its key's budget found. */
export type RateVerdict =
  | {
      readonly admitted: true;
      /** The policy with the least left: its name (its unit), what is left in it, and the seconds until its window ends. */
      readonly tightest: { readonly unit: RateUnit; readonly remaining: number; readonly reset: number };
    }
  | {
      readonly admitted: false;
      /** Whole seconds until every spent policy's window has ended: then the request would be admitted. */
      readonly retryAfter: number;
    };

const quotas = new WeakMap<readonly Policy[], Partial<Record<RateUnit, number>>>();

/** The quotas of `policies` by unit, as the store's count takes them: made once per list of policies (they are kept parsed). */
export function quotasOf(policies: readonly Policy[]): Partial<Record<RateUnit, number>> {
  let byUnit = quotas.get(policies);
  if (byUnit === undefined) {
    byUnit = Object.fromEntries(policies.map(({ unit, quota }) => [unit, quota]));
    quotas.set(policies, byUnit);
  }
  return byUnit;
}

/**
 * The verdict on a request from its key's policies (at least one) and the windows the store
 * counted at its clock's `now`.
 */
export function verdictOf(policies: readonly Policy[], admitted: boolean, windows: RateWindows): RateVerdict {
  const { now } = windows;
  if (!admitted) {
    let retryAfter = 1;
    for (const { unit, quota } of policies) {
      const seconds = RATE_UNITS[unit];
      const window = windows[unit];
      if (window.start === now - (now % seconds) && window.used >= quota) retryAfter = Math.max(retryAfter, seconds - (now % seconds));
    }
    return { admitted: false, retryAfter };
  }
  const left = policies.map(({ unit, quota }) => {
    const seconds = RATE_UNITS[unit];
    return { unit, remaining: Math.max(0, quota - windows[unit].used), reset: seconds - (now % seconds) };
  });
  const [first, ...others] = left;
  if (first === undefined) throw new Error('a rate-limit verdict needs at least one policy');
  return { admitted: true, tightest: others.reduce((tight, each) => (each.remaining < tight.remaining ? each : tight), first) };
}
