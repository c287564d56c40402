// The import baselines: what a hand-written importer does with no streaming, no staging and no
// per-record validation. It reads the whole file, JSON.parses it, and inserts every record in one
// transaction of prepared inserts, with the same SQLite settings: into the store's own `orders`
// table (its CHECKs and indexes included), or with --plain into a plain table of the same columns
// (no constraint, no index but the id). Usage: naive-import [--plain] --db FILE ORDERS.json
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { instantKey } from '../../../src/date-time';
import { openSqliteStore, type ImportRecord } from '../../../src/store';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const plain = args[0] === '--plain';
  const [flag, file, input] = plain ? args.slice(1) : args;
  if (flag !== '--db' || file === undefined || input === undefined) throw new Error('usage: naive-import [--plain] --db FILE ORDERS.json');
  // The store creates the schema; the import itself goes around it.
  if (!plain) await openSqliteStore(file).close();
  const db = new Database(file);
  if (plain) {
    db.exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, pet_id INTEGER, quantity INTEGER, ship_date TEXT, complete INTEGER,
      status TEXT, created_at TEXT, shipped_at TEXT, cancelled_at TEXT, ship_at TEXT)`);
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const records = JSON.parse(fs.readFileSync(input, 'utf8')) as ImportRecord[];
  const now = new Date().toISOString();
  const insert = db.prepare(
    'INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, ship_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (const r of records) {
      const status = r.status ?? 'pending';
      insert.run(
        r.id ?? null,
        r.petId,
        r.quantity,
        r.shipDate,
        r.complete ? 1 : 0,
        status,
        now,
        status === 'shipped' ? now : null,
        instantKey(r.shipDate),
      );
    }
  })();
  db.close();
  process.stdout.write(`imported ${records.length} orders\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
