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
      /** The spent policy whose window ends last: nothing left in it, `retryAfter` seconds to its end. */
      readonly tightest: { readonly unit: RateUnit; readonly remaining: 0; readonly reset: number };
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
    const first = policies[0];
    if (first === undefined) throw new Error('a rate-limit verdict needs at least one policy');
    let retryAfter = 1;
    let spent = first.unit;
    for (const { unit, quota } of policies) {
      const seconds = RATE_UNITS[unit];
      const window = windows[unit];
      const left = seconds - (now % seconds);
      if (window.start === now - (now % seconds) && window.used >= quota && left >= retryAfter) {
        retryAfter = left;
        spent = unit;
      }
    }
    return { admitted: false, retryAfter, tightest: { unit: spent, remaining: 0, reset: retryAfter } };
  }
  const left = policies.map(({ unit, quota }) => {
    const seconds = RATE_UNITS[unit];
    return { unit, remaining: Math.max(0, quota - windows[unit].used), reset: seconds - (now % seconds) };
  });
  const [first, ...others] = left;
  if (first === undefined) throw new Error('a rate-limit verdict needs at least one policy');
  return { admitted: true, tightest: others.reduce((tight, each) => (each.remaining < tight.remaining ? each : tight), first) };
}

/** The structured fields of draft-ietf-httpapi-ratelimit-headers that tell a client about its key's limits. */
export interface RateLimitFields {
  /** Each policy, named by its unit, with its quota and window: `"min";q=600;w=60, "day";q=100000;w=86400`. */
  readonly 'RateLimit-Policy': string;
  /** The tightest policy: what is left in it, and the seconds until its window ends: `"min";r=599;t=42`. */
  readonly RateLimit: string;
}

const policyFields = new WeakMap<readonly Policy[], string>();

/** The RateLimit fields of a verdict on a request under `policies`: the policy field made once per list of policies. */
export function rateLimitFields(policies: readonly Policy[], { tightest }: RateVerdict): RateLimitFields {
  let policy = policyFields.get(policies);
  if (policy === undefined) {
    policy = policies.map(({ unit, quota }) => `"${unit}";q=${quota};w=${RATE_UNITS[unit]}`).join(', ');
    policyFields.set(policies, policy);
  }
  return { 'RateLimit-Policy': policy, RateLimit: `"${tightest.unit}";r=${tightest.remaining};t=${tightest.reset}` };
}
