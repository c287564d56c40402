// This module is on the ground floor: the config reads PETSTORE_RATE_LIMIT with it, and the
// store counts in its units.

/** The units a rate-limit policy counts in, by their names (`600/min`), and each one's window in seconds. */
export const RATE_UNITS = { s: 1, min: 60, h: 3600, day: 86400 } as const;
export type RateUnit = keyof typeof RATE_UNITS;

/** One rate-limit policy: at most `quota` requests in each window of one `unit`. */
export interface Policy {
  readonly quota: number;
  readonly unit: RateUnit;
}

/** A key's policies as stored: `600/min,100000/day`; `none` for no limit; NULL (no policy of its own) is the deployment's. */
export const NO_LIMIT = 'none';

const POLICY = /^(\d{1,9})\/(s|min|h|day)$/;
const isRateUnit = (unit: string | undefined): unit is RateUnit => unit !== undefined && Object.hasOwn(RATE_UNITS, unit);
const UNIT_NAMES = Object.keys(RATE_UNITS).join(', ');

/**
 * The policies that `values` (each `N/UNIT`, or `none`) give, or `none`: at most one per unit, in
 * the order given. Throws an Error naming `option` and the value when one does not parse, a unit
 * is given twice, or `none` comes with a policy.
 */
export function parsePolicies(option: string, given: readonly string[]): Policy[] | typeof NO_LIMIT {
  const values = given.map((value) => value.trim());
  if (values.includes(NO_LIMIT)) {
    if (values.length > 1) throw new Error(`${option} ${NO_LIMIT} cannot be given with a policy, got "${values.join('", "')}"`);
    return NO_LIMIT;
  }
  const policies: Policy[] = [];
  for (const value of values) {
    const match = POLICY.exec(value);
    const quota = Number(match?.[1] ?? 0);
    const unit = match?.[2];
    if (!isRateUnit(unit) || quota < 1) {
      throw new Error(`${option} must be N/UNIT, a whole number of at least 1 per ${UNIT_NAMES} (600/min), or ${NO_LIMIT}, got "${value}"`);
    }
    if (policies.some((policy) => policy.unit === unit)) throw new Error(`${option} gives two policies per ${unit}, got "${value}"`);
    policies.push({ quota, unit });
  }
  return policies;
}

/** Policies as a key stores them, and as `keys list` and the RateLimit-Policy field name them. */
export function formatPolicies(policies: readonly Policy[] | typeof NO_LIMIT): string {
  return policies === NO_LIMIT ? NO_LIMIT : policies.map(({ quota, unit }) => `${quota}/${unit}`).join(',');
}
