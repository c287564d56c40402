import { DEFAULT_SCOPES } from '../../../src/keys';
import { KEY_SQL } from '../../../src/store/keys';
import { sqlitePlaceholders } from '../../../src/store/sqlite/dialect';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, migrate } from '../../../src/store/sqlite/migrations';
import { openSqliteStore } from '../../../src/store';
import { configureConnection } from '../../../src/store/sqlite/store';
import { listAll, order } from '../../helpers/stores';
import { tempDir } from '../../helpers/temp-dir';
import { StoreUnavailableError } from '../../../src/store';

const tmp = tempDir();
afterAll(tmp.cleanup);

let n = 0;
function file(): string {
  const dir = path.join(tmp.dir, `s-${++n}`);
  fs.mkdirSync(dir);
  return path.join(dir, 'orders.db');
}

test('a new database is created in WAL mode with synchronous=FULL, and every migration recorded once', async () => {
  const db = file();
  await openSqliteStore(db).close();
  await openSqliteStore(db).close();

  const raw = new Database(db, { readonly: true });
  const journal = raw.pragma('journal_mode', { simple: true });
  const versions = raw.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
  raw.close();

  expect(journal).toBe('wal');
  expect(versions).toEqual(MIGRATIONS.map((m) => m.version));
});

test('every store connection runs with synchronous=FULL, so a commit is fsynced before it is acknowledged', () => {
  const db = new Database(file());

  configureConnection(db);
  const level = db.pragma('synchronous', { simple: true });
  db.close();

  expect(level).toBe(2);
});

test('a database from a newer release is refused rather than misread', () => {
  const db = file();
  void openSqliteStore(db).close();
  const raw = new Database(db);
  raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 'now')").run();
  raw.close();

  expect(() => openSqliteStore(db)).toThrow('database schema version 999 is newer than this release knows');
});

test('a failing migration leaves the database at its previous version', () => {
  const raw = new Database(file());
  const broken = [...MIGRATIONS, { version: MIGRATIONS.length + 1, name: 'broken', sql: 'CREATE TABLE x (a); SELEC oops' }];

  expect(() => migrate(raw, broken)).toThrow();
  const tables = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('orders', 'x')").pluck().all();
  raw.close();
  expect(tables).toEqual([]);
});

test.each([
  ['an id beyond the safe range', { id: 2 ** 53 }, 'SQLITE_CONSTRAINT_CHECK'],
  ['a quantity of zero', { quantity: 0 }, 'SQLITE_CONSTRAINT_CHECK'],
  ['a fractional quantity', { quantity: 1.5 }, 'SQLITE_CONSTRAINT_DATATYPE'],
])('the schema itself refuses %s, whatever the caller validated', async (_case, bad, code) => {
  const store = openSqliteStore(file());

  // Matched by shape: the addon's error class may belong to another test file's module registry.
  await expect(store.importOrders([order(bad)])).rejects.toMatchObject({ name: 'SqliteError', code });
  expect(await listAll(store)).toEqual([]);
  await store.close();
});

test('cancels arriving together commit together, each with its own outcome', async () => {
  const store = openSqliteStore(file());
  await store.importOrders([order({ id: 1 }), order({ id: 2 }), order({ id: 3, status: 'shipped' })]);
  const before = await store.listEtag();

  const outcomes = await Promise.all([
    store.cancelOrder(1),
    store.cancelOrder(1),
    store.cancelOrder(2),
    store.cancelOrder(3),
    store.cancelOrder(4),
  ]);

  expect(outcomes).toEqual(['cancelled', 'not_found', 'cancelled', 'shipped', 'not_found']);
  expect(await store.listEtag()).not.toBe(before);
  expect((await listAll(store)).map((o) => o.id)).toEqual([3]);
  await store.close();
});

// The answers SQLite reads without a write (an order that is not pending, a key) come at once,
// not as promises, so that a request for them takes no turn of the event loop.
test('a cancel of an order that is not pending, and a key check, are answered at once; a pending order waits for its commit', async () => {
  const store = openSqliteStore(file());
  await store.importOrders([order({ id: 1 }), order({ id: 2, status: 'shipped' })]);
  await store.createKey('ops', 'f'.repeat(64), { scopes: DEFAULT_SCOPES });

  expect(store.cancelOrder(404)).toBe('not_found');
  expect(store.cancelOrder(2)).toBe('shipped');
  const now = new Date().toISOString();
  expect(store.findKey('f'.repeat(64), now)).toEqual({
    name: 'ops',
    state: 'active',
    scopes: new Set(['orders:read', 'orders:cancel']),
    policies: null,
  });
  expect(store.findKey('0'.repeat(64), now)).toBeNull();
  const pending = store.cancelOrder(1);
  expect(pending).toBeInstanceOf(Promise);
  expect(await pending).toBe('cancelled');
  expect(store.cancelOrder(1)).toBe('not_found');

  await store.close();
  expect(() => store.cancelOrder(1)).toThrow(StoreUnavailableError);
  expect(() => store.findKey('f'.repeat(64), now)).toThrow(StoreUnavailableError);
  expect(() => store.getOrder(1)).toThrow('the database is closed');
  // Closing again is harmless.
  await expect(store.close()).resolves.toBeUndefined();
});

test('a cancel answered while an import streams in is committed on its own, even if the import then fails', async () => {
  const store = openSqliteStore(file());
  await store.importOrders([order({ id: 1 }), order({ id: 2 })]);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let staged!: () => void;
  // Settles when the import asks for its second record: it has taken the first.
  const firstTaken = new Promise<void>((resolve) => (staged = resolve));
  async function* failingRecords() {
    yield order({ id: 10 });
    staged();
    await gate;
    throw new Error('the file broke off');
  }

  const importing = store.importOrders(failingRecords());
  await firstTaken;
  const cancelled = await store.cancelOrder(1);
  const listed = (await listAll(store)).map((o) => o.id);
  release();

  expect(cancelled).toBe('cancelled');
  expect(listed).toEqual([2]);
  await expect(importing).rejects.toThrow('the file broke off');
  expect((await listAll(store)).map((o) => o.id)).toEqual([2]);
  await store.close();
});

describe('statements shared with PostgreSQL', () => {
  test('take positional placeholders in place of $1, $2, … used once each, in order', () => {
    expect(sqlitePlaceholders('UPDATE t SET a = $1 WHERE b = $2 AND c = $3')).toBe('UPDATE t SET a = ? WHERE b = ? AND c = ?');
    expect(sqlitePlaceholders('SELECT 1')).toBe('SELECT 1');
  });

  // A bare `LIMIT ?` is planned with its bound value, so SQLite compiles the statement again at
  // every run; `+?` is the same limit, planned once.
  test("write a LIMIT's placeholder as +?, and the limit holds", () => {
    const sql = sqlitePlaceholders('SELECT x FROM t WHERE x > $1 ORDER BY x LIMIT $2');
    expect(sql).toBe('SELECT x FROM t WHERE x > ? ORDER BY x LIMIT +?');
    const db = new Database(file());
    try {
      db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
      const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
      for (let x = 1; x <= 10; x += 1) insert.run(x);
      const page = db.prepare<[number, number], number>(sql).pluck();
      expect(page.all(2, 3)).toEqual([3, 4, 5]);
      expect(page.all(8, 5)).toEqual([9, 10]);
      expect(page.all(0, 0)).toEqual([]);
    } finally {
      db.close();
    }
  });

  test.each([['UPDATE t SET a = $2 WHERE b = $1'], ['SELECT $1, $1'], ['SELECT $1, $3']])(
    'refuse %s, which positional binding would get wrong',
    (sql) => {
      expect(() => sqlitePlaceholders(sql)).toThrow(/placeholders must be \$1, \$2, … once each, in order/);
    },
  );
});

// Every keyed request runs the key check, and so does every refused one: one statement finds a
// key by its secret or by the secret a rotation replaced, each through its own index, never by
// reading the keys.
test("the key check is one statement through the index of each of a key's secrets, never reading the keys", async () => {
  const at = file();
  await openSqliteStore(at).close();
  const db = new Database(at, { readonly: true });
  try {
    const plan = db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sqlitePlaceholders(KEY_SQL.find)}`)
      .all('h', 'h')
      .map((row) => row.detail);
    expect(plan).toEqual([
      'MULTI-INDEX OR',
      expect.stringMatching(/^INDEX \d+$/),
      expect.stringMatching(/^SEARCH api_keys USING INDEX \S+ \(key_hash=\?\)$/),
      expect.stringMatching(/^INDEX \d+$/),
      'SEARCH api_keys USING INDEX api_keys_previous_hash (previous_hash=?)',
    ]);
  } finally {
    db.close();
  }
});

test('counting requests keeps the write-ahead log bounded: their commits run its checkpoint', async () => {
  const file = path.join(tmp.dir, 'counted.db');
  const store = openSqliteStore(file);
  try {
    // Each count awaited alone is a transaction of its own: 3,000 commits, three times the
    // 1,000 pages after which SQLite checkpoints and starts the log again.
    for (let i = 0; i < 3000; i += 1) expect((await store.countRequest('busy', { day: 1_000_000 })).admitted).toBe(true);

    expect(fs.statSync(`${file}-wal`).size).toBeLessThan(1100 * 4120);
    expect((await store.countRequest('busy', { day: 1_000_000 })).windows.day.used).toBe(3001);
  } finally {
    await store.close();
  }
});
