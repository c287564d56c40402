import fc from 'fast-check';

// Strings at and just past every edge of the contract's date-time format, for the tests that prove
// each implementation of it (the stores' CHECKs, the fast format check) agrees with ajv-formats.

/** One part of a date-time: mostly one the format allows, sometimes one just past its edge. */
const part = (valid: string[], invalid: string[] = []) =>
  invalid.length === 0
    ? fc.constantFrom(...valid)
    : fc.oneof({ weight: 19, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });
const nearDateTime = fc
  .tuple(
    part(['2026', '2024', '1900', '2000', '0000', '9999'], ['202', '20a6']),
    part(['-']),
    part(['01', '02', '04', '12'], ['00', '13', '1']),
    part(['-']),
    part(['01', '28', '29', '30', '31'], ['00', '32']),
    part(['T', 't', ' ', '\t', '\n', '\u00a0', '\u3000', '\ufeff'], ['x', '', 'TT']),
    part(['00', '10', '23'], ['24', '25', '99', '0']),
    part([':'], ['-']),
    part(['00', '59'], ['60', '5']),
    part([':']),
    part(['00', '59', '60'], ['61', '5']),
    part(['', '.5', '.123456789'], ['.', '.x', '..5', ',5']),
    part(['Z', 'z', '+01', '-01', '+23', '+0100', '+01:00', '-01:00', '-00:59'], ['', '+24', '+01:60', '+1', '+01:', '+010', 'GMT', 'Z ']),
  )
  .map((parts) => parts.join(''));
const mutated = fc
  .tuple(nearDateTime, fc.nat(30), fc.constantFrom('', '0', 'T', ':', '-', '+', 'Z', '.', ' '))
  .map(([text, at, insert]) => (at % 3 === 0 ? text : text.slice(0, at) + insert + text.slice(at + (at % 2))));

/** Values worth naming: the three, leap days and seconds, offsets, the longest fraction. */
export const KNOWN_DATE_TIMES = [
  '2026-11-20T10:00:00Z',
  '2026-11-20T10:00:00.123+05:30',
  '2024-02-29T00:00:00Z',
  '2016-12-31T23:59:60Z',
  '2017-01-01T00:59:60+01:00',
  '2026-13-45T99:99:99Z',
  '2026-11-20T10:00:00',
  '2026-02-30T10:00:00Z',
  '2023-02-29T10:00:00Z',
  '2026-11-20T10:00:00+24:00',
  `2026-11-20T10:00:00.${'1'.repeat(43)}Z`,
  `2026-11-20T10:00:00.${'1'.repeat(44)}Z`,
  '2026-11-20T24:59:59+01:00',
  '2026-11-20T24:59:59-01:00',
  '2026-11-20T23:59:60-00:01',
];

/**
 * The usual forms (`Z`, with and without milliseconds) at every month and day edge, leap years
 * and century years included, and at the clock's: where a rule may decide them apart from the rest.
 */
function usualFormEdges(): string[] {
  const two = (n: number) => String(n).padStart(2, '0');
  const edges: string[] = [];
  for (const year of ['2023', '2024', '1900', '2000', '0000'])
    for (let month = 0; month <= 13; month += 1)
      for (const day of [0, 1, 28, 29, 30, 31, 32])
        for (const time of ['00:00:00', '19:59:59', '23:59:59', '24:00:00', '23:59:60'])
          for (const fraction of ['', '.000', '.12']) edges.push(`${year}-${two(month)}-${two(day)}T${time}${fraction}Z`);
  return edges;
}

/** A few thousand such strings, the same on every run. */
export function dateTimeSamples(): string[] {
  return [
    ...KNOWN_DATE_TIMES,
    ...usualFormEdges(),
    ...fc.sample(nearDateTime, { numRuns: 3000, seed: 20261122 }),
    ...fc.sample(mutated, { numRuns: 3000, seed: 20261123 }),
  ];
}
