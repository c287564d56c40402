const PLAIN_DECIMAL = /^-?(0|[1-9][0-9]*)$/;

/**
 * Parses the plain decimal form of a safe integer ("42", "-7"), and nothing else:
 * no sign "+", no leading zeros, no "-0", no exponent, no hex, no whitespace, nothing beyond ±(2^53−1).
 * Returns undefined for anything else, so that no id is ever rounded or reinterpreted.
 */
export function parseId(raw: string): number | undefined {
  if (raw.length > 17 || !PLAIN_DECIMAL.test(raw) || raw === '-0') return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Why `raw` is not an id, phrased for a client or an operator. */
export function idProblem(name: string, raw: string): string {
  const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
  return `${name} must be the plain decimal form of an integer between -9007199254740991 and 9007199254740991, got ${JSON.stringify(shown)}`;
}
