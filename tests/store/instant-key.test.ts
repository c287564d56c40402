import Ajv from 'ajv';
import Database from 'better-sqlite3';
import { ValidationContext } from 'openapi-backend';
import pg from 'pg';
import { instantKey } from '../../src/date-time';
import { customizeAjv } from '../../src/openapi';
import { instantKeySql } from '../../src/store/date-time-sql';
import { dateTimeSamples } from '../helpers/date-times';
import { ADMIN_URL } from '../helpers/postgres';

// v2 filters orders by the instant their shipDate names. The stores keep a key beside each ship
// date (instantKeySql) and the server makes one from each filter (instantKey): the two must agree
// on every valid date-time, and comparing keys as text must compare instants.
const validDateTime = customizeAjv(new Ajv(), {}, ValidationContext.Response).compile({
  type: 'string',
  format: 'date-time',
  maxLength: 64,
});
const valid = dateTimeSamples().filter((value) => validDateTime(value) === true);

/** The instant a valid date-time names, the plain way: whole UTC seconds, and the fraction's digits. */
function reference(value: string): { seconds: number; fraction: string } {
  const match = /^(\d{4})-(\d\d)-(\d\d)[\s\S](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[Zz]|([+-])(\d\d):?(\d\d)?)$/.exec(value)!;
  const [, year, month, day, hour, minute, second, fraction = '', sign, zoneHours = '0', zoneMinutes = '0'] = match;
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second));
  const offset = (sign === '-' ? -1 : 1) * (Number(zoneHours) * 3600 + Number(zoneMinutes) * 60);
  return { seconds: date.getTime() / 1000 - (sign ? offset : 0), fraction: fraction.replace(/0+$/, '') };
}

const compareReference = (a: string, b: string): number => {
  const x = reference(a);
  const y = reference(b);
  if (x.seconds !== y.seconds) return Math.sign(x.seconds - y.seconds);
  return x.fraction === y.fraction ? 0 : x.fraction < y.fraction ? -1 : 1;
};
const compareKeys = (a: string, b: string): number => (a === b ? 0 : a < b ? -1 : 1);

test('comparing keys as text compares the instants, whatever the offsets and fractions', () => {
  const pairs: Array<[string, string]> = [
    ['2026-11-20T10:00:00+05:30', '2026-11-20T04:30:00Z'],
    ['2026-11-20T10:00:00.5Z', '2026-11-20T10:00:00.50000Z'],
    ['2026-11-20T10:00:00.12Z', '2026-11-20T10:00:00.123Z'],
    ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.000000001Z'],
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00Z'],
    ['0000-01-01T00:00:00+23:59', '9999-12-31T23:59:59-23:59'],
    ['2026-11-20 09:59:59.999999999-01:00', '2026-11-20T11:00:00+01'],
  ];
  for (let i = 0; i + 1 < valid.length; i += 1) pairs.push([valid[i]!, valid[i + 1]!], [valid[i]!, valid[(i * 7) % valid.length]!]);

  const wrong = pairs.filter(([a, b]) => compareKeys(instantKey(a), instantKey(b)) !== compareReference(a, b));

  expect(valid.length).toBeGreaterThan(1000);
  expect(wrong).toEqual([]);
  expect(instantKey('2026-11-20T10:00:00+05:30')).toBe(instantKey('2026-11-20T04:30:00.000Z'));
  expect(new Set(valid.map((value) => instantKey(value).indexOf('.')))).toEqual(new Set([12]));
});

test('SQLite computes the same key as the server for every valid date-time', () => {
  const db = new Database(':memory:');
  const key = db.prepare<[{ v: string }], { k: string }>(`SELECT ${instantKeySql('@v')} AS k`);

  const disagreements = valid.filter((value) => key.get({ v: value })!.k !== instantKey(value));

  expect(disagreements).toEqual([]);
  db.close();
});

const onPostgres = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? test : test.skip;

onPostgres('PostgreSQL computes the same key as the server for every valid date-time', async () => {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string; k: string }>(`SELECT v, ${instantKeySql('v')} AS k FROM unnest($1::text[]) AS t(v)`, [
      valid,
    ]);

    const disagreements = rows.filter((row) => row.k !== instantKey(row.v)).map((row) => row.v);

    expect(rows).toHaveLength(valid.length);
    expect(disagreements).toEqual([]);
  } finally {
    await client.end();
  }
});
