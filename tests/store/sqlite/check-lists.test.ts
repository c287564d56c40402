import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, migrate } from '../../../src/store/sqlite/migrations';
import { tempDir } from '../../helpers/temp-dir';

// SQLite makes the values of an IN list of three or more into a table, and inside a CHECK it makes
// that table again for every row written (OpenEphemeral in the insert's program): a cost an
// import pays per order. Migration 13 spells such CHECKs with OR, with the same verdicts.
const tmp = tempDir();
afterAll(tmp.cleanup);

/** The program SQLite runs to insert a row of every column into `table`. */
function insertProgram(db: Database.Database, table: string): string[] {
  const columns = db.prepare<[string], string>(`SELECT name FROM pragma_table_info(?)`).pluck().all(table);
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => 'NULL').join(', ')})`;
  return db
    .prepare<[], { opcode: string }>(`EXPLAIN ${sql}`)
    .all()
    .map((op) => op.opcode);
}

test('no table of the store makes a table for its CHECKs on every row written', () => {
  const db = new Database(':memory:');
  migrate(db);
  const tables = db.prepare<[], string>(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).pluck().all();

  expect(tables).toEqual(expect.arrayContaining(['orders', 'order_events', 'webhook_attempts']));
  for (const table of tables)
    expect({ table, ephemeral: insertProgram(db, table).includes('OpenEphemeral') }).toEqual({ table, ephemeral: false });
  // What the test looks for is there before the migration.
  const older = new Database(':memory:');
  migrate(older, MIGRATIONS.slice(0, 12));
  expect(insertProgram(older, 'orders')).toContain('OpenEphemeral');
  db.close();
  older.close();
});

describe('migration 13 on a store that has orders, events and delivery attempts', () => {
  const file = path.join(tmp.dir, 'older.db');
  const snapshot = (db: Database.Database) => ({
    orders: db.prepare('SELECT * FROM orders ORDER BY id').all(),
    events: db.prepare('SELECT * FROM order_events ORDER BY seq').all(),
    attempts: db.prepare('SELECT * FROM webhook_attempts ORDER BY seq').all(),
    lastSeq: db.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'order_events'`).pluck().get(),
    indexes: db
      .prepare(
        `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('orders', 'order_events', 'webhook_attempts') ORDER BY name`,
      )
      .pluck()
      .all(),
  });
  let before: ReturnType<typeof snapshot>;
  let db: Database.Database;

  beforeAll(() => {
    db = new Database(file);
    migrate(db, MIGRATIONS.slice(0, 12));
    db.exec(`INSERT INTO orders (id, pet_id, quantity, ship_date, ship_at, complete, status, created_at, shipped_at, cancelled_at) VALUES
      (1, 7, 1, '2026-12-01T10:00:00Z', '100000000000.', 0, 'pending', '2026-11-01T00:00:00Z', NULL, NULL),
      (2, 8, 2, '2026-12-02T10:00:00.250+01:00', '100000000001.25', 1, 'shipped', '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z', NULL),
      (3, 9, 3, '2026-12-03T10:00:00Z', '100000000002.', 0, 'cancelled', '2026-11-01T00:00:00Z', NULL, '2026-11-03T00:00:00Z')`);
    db.exec(`INSERT INTO order_events (type, order_id, status, occurred_at, complete) VALUES
      ('order.created', 1, 'pending', '2026-11-01T00:00:00Z', 0), ('order.shipped', 2, 'shipped', '2026-11-02T00:00:00Z', 1),
      ('order.cancelled', 3, NULL, '2026-11-03T00:00:00Z', NULL), ('order.created', 4, 'pending', '2026-11-04T00:00:00Z', 0)`);
    // The newest event pruned: the feed has given seq 4, which must never be given again.
    db.exec('DELETE FROM order_events WHERE seq = 4');
    db.exec(`INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, at, status, error, duration_ms, outcome) VALUES
      ('we_1', 'evt_1', 1, '2026-11-01T00:00:01Z', 500, NULL, 12.5, 'retrying'), ('we_1', 'evt_1', 2, '2026-11-01T00:00:06Z', 204, NULL, 3.25, 'delivered'),
      ('we_2', 'evt_1', 1, '2026-11-01T00:00:01Z', 410, NULL, 2.5, 'failed'), ('we_3', 'evt_1', 1, '2026-11-01T00:00:01Z', NULL, 'a private address', 0, 'refused')`);
    before = snapshot(db);
    migrate(db);
  });
  afterAll(() => db.close());

  test('keeps every row, the indexes and the last seq the feed gave', () => {
    expect(before.lastSeq).toBe(4);
    expect(snapshot(db)).toEqual(before);
    expect(db.prepare(`SELECT type, order_id FROM order_events WHERE seq = (SELECT max(seq) FROM order_events)`).get()).toEqual({
      type: 'order.cancelled',
      order_id: 3,
    });
    db.prepare(
      `INSERT INTO order_events (type, order_id, status, occurred_at, complete) VALUES ('order.created', 5, 'pending', '2026-11-05T00:00:00Z', 0)`,
    ).run();
    expect(db.prepare('SELECT max(seq) FROM order_events').pluck().get()).toBe(5);
  });

  test.each([
    ['orders', `UPDATE orders SET status = 'lost' WHERE id = 1`, 'order_status_known'],
    ['orders', `UPDATE orders SET status = 'Pending' WHERE id = 1`, 'order_status_known'],
    [
      'order_events',
      `INSERT INTO order_events (type, order_id, status, occurred_at) VALUES ('order.lost', 1, 'pending', '2026-11-05T00:00:00Z')`,
      'order_event_type_known',
    ],
    [
      'webhook_attempts',
      `INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, at, duration_ms, outcome) VALUES ('we_1', 'evt_2', 1, '2026-11-05T00:00:00Z', 1, 'lost')`,
      'webhook_attempt_outcome',
    ],
  ])('%s still refuses a value outside its list: %s', (_table, sql, constraint) => {
    expect(() => db.exec(sql)).toThrow(`CHECK constraint failed: ${constraint}`);
  });
});
