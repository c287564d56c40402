import Ajv from 'ajv';
import Database from 'better-sqlite3';
import { ValidationContext } from 'openapi-backend';
import pg from 'pg';
import { customizeAjv } from '../../src/openapi';
import { shipDateRule } from '../../src/store/date-time-sql';
import { postgresDialect } from '../../src/store/postgres/dialect';
import { sqliteDialect } from '../../src/store/sqlite/dialect';
import { dateTimeSamples } from '../helpers/date-times';
import { ADMIN_URL } from '../helpers/postgres';

// The stores' CHECK for shipDate must accept exactly what the contract's validator accepts:
// stricter would refuse imports the spec allows, looser would store what the list cannot serve.
const validDateTime = customizeAjv(new Ajv(), {}, ValidationContext.Response).compile({
  type: 'string',
  format: 'date-time',
  maxLength: 64,
});
const contractAccepts = (value: string): boolean => validDateTime(value) === true;

test('every sample has the same verdict from SQLite as from the contract', () => {
  const db = new Database(':memory:');
  const check = db.prepare<[{ v: string }], { ok: number }>(`SELECT ${shipDateRule('@v', sqliteDialect)} AS ok`);
  const values = dateTimeSamples();

  const disagreements = values.filter((value) => (check.get({ v: value })!.ok === 1) !== contractAccepts(value));

  expect(disagreements).toEqual([]);
  // The samples cover both verdicts in earnest, not one side only.
  expect(values.filter(contractAccepts).length).toBeGreaterThan(500);
  expect(values.filter((value) => !contractAccepts(value)).length).toBeGreaterThan(500);
  db.close();
});

const onPostgres = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? test : test.skip;

onPostgres('every sample has the same verdict from PostgreSQL as from the contract', async () => {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const values = dateTimeSamples();
    const { rows } = await client.query<{ v: string; ok: boolean }>(
      `SELECT v, ${shipDateRule('v', postgresDialect)} AS ok FROM unnest($1::text[]) AS t(v)`,
      [values],
    );

    const disagreements = rows.filter((row) => row.ok !== contractAccepts(row.v)).map((row) => row.v);

    expect(rows).toHaveLength(values.length);
    expect(disagreements).toEqual([]);
  } finally {
    await client.end();
  }
});
