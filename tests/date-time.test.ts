import { fullFormats } from 'ajv-formats/dist/formats';
import { isDateTime, isoNow } from '../src/date-time';
import { dateTimeSamples } from './helpers/date-times';

// The contract's date-time format is checked by isDateTime, a faster reading of ajv-formats'
// own rules: on every sample, the two must agree.
const reference = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;

test('isDateTime agrees with ajv-formats on every sample, both verdicts well covered', () => {
  const values = dateTimeSamples();

  const disagreements = values.filter((value) => isDateTime(value) !== reference(value));

  expect(disagreements).toEqual([]);
  expect(values.filter(isDateTime).length).toBeGreaterThan(500);
  expect(values.filter((value) => !isDateTime(value)).length).toBeGreaterThan(500);
});

test.each([
  ['2026-11-20T10:00:00Z', true],
  ['2016-12-31T23:59:60Z', true],
  ['2017-01-01T00:59:60+01:00', true],
  ['2024-02-29T00:00:00.5-00:30', true],
  ['2026-13-45T99:99:99Z', false],
  ['2026-11-20T10:00:00', false],
  ['2026-02-30T10:00:00Z', false],
  ['2023-02-29T10:00:00Z', false],
  // ajv-formats' leap-second arithmetic accepts hour 24 when the offset brings it to 23:59 UTC.
  ['2026-11-20T24:59:59+01:00', true],
  ['2026-11-20T24:59:59-01:00', false],
])('%s is a date-time: %s', (value, expected) => {
  expect(isDateTime(value)).toBe(expected);
  expect(reference(value)).toBe(expected);
});

describe('isoNow', () => {
  afterEach(() => jest.useRealTimers());

  test('is the clock read as Date#toISOString would write it, in every millisecond, and follows the clock backwards', () => {
    jest.useFakeTimers();
    const instants = [
      Date.UTC(2026, 10, 28, 2, 59, 59, 998),
      Date.UTC(2026, 10, 28, 2, 59, 59, 999),
      Date.UTC(2026, 10, 28, 3),
      Date.UTC(2026, 10, 28, 2, 59, 59, 999),
    ];
    const read: Array<[string, string]> = [];
    for (const instant of instants) {
      jest.setSystemTime(instant);
      read.push([isoNow(), isoNow()]);
    }

    const written = instants.map((instant) => new Date(instant).toISOString());
    expect(read).toEqual(written.map((iso) => [iso, iso]));
  });
});
