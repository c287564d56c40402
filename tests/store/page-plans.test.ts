import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { instantKey } from '../../src/date-time';
import { openPostgresStore, openSqliteStore, type OrderFilter } from '../../src/store';
import { instantKeySql } from '../../src/store/date-time-sql';
import { pageQuery } from '../../src/store/sql';
import { sqlitePlaceholders } from '../../src/store/sqlite/dialect';
import { freshDatabase } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';

// A page of 100 of any filter combination is read through an index in id order and stops at its
// page, never scanning the table: each store's plan for every combination, first page and deep
// page. SQLite reads the page indexes exactly; PostgreSQL chooses by cost between them and the id
// order (see its test), on 1,000,000 orders.
const ORDERS = 1_000_000;
/**
 * The SQLite store keeps no statistics (it never runs ANALYZE; the test checks there are none), so
 * SQLite plans a page from the schema and the statement alone, whatever the number of rows: a
 * store of this many plans as one of any size.
 */
const SQLITE_ORDERS = 20_000;
const LIMIT = 100;

/** The generated orders, as SQL over n = 1…ORDERS: 5,000 pets, a tenth shipped, a tenth cancelled, ship dates over a year. */
const COLUMNS = {
  pet_id: 'n % 5000',
  quantity: '1 + n % 3',
  complete: (truth: string) => `(n % 7 = 0) = ${truth}`,
  status: `CASE n % 10 WHEN 0 THEN 'shipped' WHEN 1 THEN 'cancelled' ELSE 'pending' END`,
};

/** Every combination of the filters, as the store gets them. */
function everyFilter(): OrderFilter[] {
  const filters: OrderFilter[] = [];
  for (const status of [undefined, 'pending', 'shipped'] as const)
    for (const petId of [undefined, 42])
      for (const complete of [undefined, true, false])
        for (const [shipFrom, shipTo] of [
          [undefined, undefined],
          ['2026-06-01T00:00:00Z', undefined],
          [undefined, '2026-03-01T00:00:00+01:00'],
          ['2026-05-01T00:00:00Z', '2026-05-08T00:00:00Z'],
        ] as const)
          filters.push({
            status,
            petId,
            complete,
            shipFrom: shipFrom === undefined ? undefined : instantKey(shipFrom),
            shipTo: shipTo === undefined ? undefined : instantKey(shipTo),
          });
  return filters;
}

const describeFilter = (filter: OrderFilter): string => JSON.stringify(filter);

test(`SQLite: every filter combination's page is read from the page indexes, never a table scan, whatever the number of orders`, async () => {
  const tmp = tempDir();
  const file = path.join(tmp.dir, 'plans.db');
  try {
    await openSqliteStore(file).close();
    const db = new Database(file);
    const shipDate = `printf('2026-%02d-%02dT%02d:00:00Z', 1 + n % 12, 1 + n % 28, n % 24)`;
    db.exec(`INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at)
      SELECT n, ${COLUMNS.pet_id}, ${COLUMNS.quantity}, d, ${COLUMNS.complete('1')}, ${COLUMNS.status}, 'x',
             CASE n % 10 WHEN 0 THEN 'x' END, CASE n % 10 WHEN 1 THEN 'x' END, ${instantKeySql('d')}
      FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${SQLITE_ORDERS}) SELECT n, ${shipDate} AS d FROM c)`);
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE name LIKE 'sqlite_stat%'`).all()).toEqual([]);

    const problems: string[] = [];
    for (const filter of everyFilter()) {
      for (const after of [undefined, SQLITE_ORDERS / 2]) {
        const { text, values } = pageQuery({ filter, after, limit: LIMIT });
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sqlitePlaceholders(text)}`)
          .all(...values)
          .map((row) => row.detail);
        const reads = plan.filter((detail) => / orders\b/.test(detail));
        // Each branch searches a page index by its equality columns and the keyset; none scans.
        // Unfiltered, the page is the id order itself; for a pet, that pet's orders in id order; else
        // each branch searches orders_page by its status and completion, and the keyset.
        const unfiltered = Object.values(filter).every((value) => value === undefined);
        const expected = unfiltered
          ? /^SEARCH orders USING INTEGER PRIMARY KEY \(rowid>\?\)$/
          : filter.petId !== undefined
            ? /^SEARCH orders USING INDEX orders_page_by_pet \(pet_id=\? AND id>\?\)$/
            : new RegExp(
                `^SEARCH orders USING (COVERING )?INDEX orders_page \\(status=\\? AND complete=\\?${after === undefined ? '' : ' AND id>\\?'}\\)$`,
              );
        if (reads.length === 0 || reads.some((detail) => !expected.test(detail))) {
          problems.push(`${describeFilter(filter)} after ${after}: ${plan.join(' | ')}`);
        }
      }
    }
    db.close();

    expect(problems).toEqual([]);
  } finally {
    tmp.cleanup();
  }
}, 120_000);

const onPostgres = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? test : test.skip;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The indexes a page may be read from: the page indexes, or the orders in id order. */
const INDEXES = new Set(['orders_page', 'orders_page_by_pet', 'orders_pkey', 'orders_listed']);

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

onPostgres(
  `PostgreSQL: every filter combination's page is read through an index and stops at its page, on ${ORDERS.toLocaleString('en')} orders`,
  async () => {
    const database = await freshDatabase();
    try {
      await (await openPostgresStore(database.url)).close();
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        // Each of the 8,064 ship dates (and its instant key, which costs PostgreSQL far more to work out
        // than the rest of a row) made once, then given to the orders in id order.
        await client.query(`WITH dates AS MATERIALIZED (
          SELECT month, day, hour, d, ${instantKeySql('d')} AS ship_at
          FROM (SELECT month, day, hour, format('2026-%s-%sT%s:00:00Z', lpad(month::text, 2, '0'), lpad(day::text, 2, '0'), lpad(hour::text, 2, '0')) AS d
                FROM generate_series(1, 12) AS month, generate_series(1, 28) AS day, generate_series(0, 23) AS hour) AS each_date)
        INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at)
        SELECT n, ${COLUMNS.pet_id}, ${COLUMNS.quantity}, d, ${COLUMNS.complete('true')}, ${COLUMNS.status}, 'x',
               CASE n % 10 WHEN 0 THEN 'x' END, CASE n % 10 WHEN 1 THEN 'x' END, ship_at
        FROM generate_series(1, ${ORDERS}) AS n
        JOIN dates ON month = 1 + n % 12 AND day = 1 + n % 28 AND hour = n % 24
        ORDER BY n`);
        await client.query('VACUUM ANALYZE orders');

        const problems: string[] = [];
        let worst = 0;
        for (const filter of everyFilter()) {
          for (const after of [undefined, ORDERS / 2]) {
            const { text, values } = pageQuery({ filter, after, limit: LIMIT });
            const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
              `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
              values,
            );
            const all = nodes(rows[0]!['QUERY PLAN'][0]!.Plan);
            // PostgreSQL costs each branch: it reads a page index by its equality columns, or, for a
            // branch that most orders match, walks ids (the heap is in id order) and skips the rest.
            // Either way a branch stops at its page; what it never does is scan the table or sort it.
            const scans = all.filter((node) => node['Node Type'].endsWith('Scan') && node['Node Type'] !== 'Subquery Scan');
            const wrong = all.filter(
              (node) => node['Node Type'] === 'Seq Scan' || (node['Index Name'] !== undefined && !INDEXES.has(node['Index Name'])),
            );
            const read = scans.reduce((sum, node) => sum + (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0), 0);
            if (scans.length === 0 || wrong.length > 0) problems.push(`${describeFilter(filter)} after ${after}: ${JSON.stringify(scans)}`);
            worst = Math.max(worst, read);
          }
        }

        expect(problems).toEqual([]);
        // The most rows any page read, kept and skipped together: bounded by the page and how few
        // orders its filter matches, not by the table (9,424 here: a week of ship dates, where
        // PostgreSQL walks ids rather than the page index; the bound leaves room for its statistics).
        expect(worst).toBeLessThan(ORDERS / 40);
      } finally {
        await client.end();
      }
    } finally {
      await database.drop();
    }
  },
  180_000,
);
