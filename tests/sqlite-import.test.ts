import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../src/store';
import { checkConstraints } from '../src/store/sqlite/import';

// The SQLite import checks each record as it is staged, under the orders table's own CHECKs, and
// moves the rows without checking them again: the staging table must carry every one of them.
describe('the CHECKs the SQLite import stages under', () => {
  test('are every CHECK of the orders table, as the schema spells it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-checks-'));
    const file = path.join(dir, 'store.db');
    await openSqliteStore(file).close();
    const db = new Database(file, { readonly: true });
    const { sql } = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'orders'").get() as { sql: string };
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });

    const checks = checkConstraints(sql);

    expect(checks.map((check) => /^CONSTRAINT (\w+)/.exec(check)?.[1])).toEqual([
      'order_id_safe',
      'order_pet_id_safe',
      'order_quantity_range',
      'order_ship_date_rfc3339',
      'order_complete_boolean',
      'order_status_known',
      'order_cancelled_at',
      'order_shipped_at',
    ]);
    // Every CHECK keyword of the definition is accounted for.
    expect(checks).toHaveLength(sql.match(/\bCHECK\s*\(/gi)!.length);
    for (const check of checks) expect(sql).toContain(check.replace(/^CONSTRAINT \w+ /, ''));
  });

  test('reads column and table CHECKs, named or not, past quotes and nested parentheses', () => {
    const sql = `CREATE TABLE "t" (
      a INTEGER CHECK (a > 0),
      b TEXT DEFAULT 'CHECK (x)' CONSTRAINT b_shape CHECK (b GLOB '*)*' AND (length(b) < 9)),
      "check" INTEGER,
      CONSTRAINT "odd name" CHECK ((a + "check") % 2 = 0)
    )`;

    expect(checkConstraints(sql)).toEqual([
      'CHECK (a > 0)',
      "CONSTRAINT b_shape CHECK (b GLOB '*)*' AND (length(b) < 9))",
      'CONSTRAINT "odd name" CHECK ((a + "check") % 2 = 0)',
    ]);
  });
});
