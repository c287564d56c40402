import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { ImportConflictError, type Store } from '../src/store';
import { instantKeySql } from '../src/store/date-time-sql';
import { MOVE_SQL, twinOfOrders } from '../src/store/sqlite/import';
import { freshStore, order, rowsOf, tempDir } from './helpers/store';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

// The SQLite import checks, numbers and indexes its records in a twin of `orders` before it takes
// the write lock; under the lock, only the move. The move is quick only if SQLite copies the twin's
// rows and index entries as they are, which it does only when the two tables match exactly.
describe('the twin of the orders table that the SQLite import moves from', () => {
  test('has the orders table’s definition and indexes, so the move copies rows and index entries without rebuilding them', async () => {
    const { store, file } = freshStore(tmp.dir);
    await store.close();
    const db = new Database(file);
    try {
      const { table, indexes } = twinOfOrders(db);
      const definitions = db
        .prepare<[], { type: string; sql: string }>(
          "SELECT type, sql FROM sqlite_schema WHERE tbl_name = 'orders' ORDER BY type = 'index', name",
        )
        .all();
      // The schema's own statements, only their heads rewritten.
      const body = (sql: string) => sql.slice(sql.indexOf('('));
      expect([table, ...indexes].map(body)).toEqual(definitions.map(({ sql }) => body(sql)));
      expect(table).toMatch(/^CREATE TEMP TABLE import_ready \(/);
      expect(indexes).toHaveLength(2);

      db.exec(table);
      for (const index of indexes) db.exec(index);
      const opcodes = db
        .prepare<[], { opcode: string }>(`EXPLAIN ${MOVE_SQL}`)
        .all()
        .map((row) => row.opcode);
      // SQLite's transfer: each row copied as a record (RowData/RowCell), never taken apart (Column)
      // and built again (MakeRecord), and so never checked again either.
      expect(opcodes).toEqual(expect.arrayContaining(['IdxInsert']));
      expect(opcodes.some((op) => op === 'RowData' || op === 'RowCell')).toBe(true);
      expect(opcodes).not.toContain('MakeRecord');
      expect(opcodes).not.toContain('Column');

      // Without the same indexes SQLite falls back to building every row: the test can tell.
      db.exec('DROP INDEX temp.import_ready_0');
      const fallback = db
        .prepare<[], { opcode: string }>(`EXPLAIN ${MOVE_SQL}`)
        .all()
        .map((row) => row.opcode);
      expect(fallback).toContain('MakeRecord');
    } finally {
      db.close();
    }
  });
});

/**
 * Another process takes the write lock and inserts an order, holds the lock a while, then commits:
 * an import that starts meanwhile checks its records against the orders as they were, and takes
 * the lock only after that order is in.
 */
async function whileAnotherWriterAdds<T>(file: string, id: number, during: () => Promise<T>): Promise<T> {
  const script = `
    const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
    const db = new Database(${JSON.stringify(file)}, { timeout: 10000 });
    db.exec('BEGIN IMMEDIATE');
    db.prepare(\`INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, ship_at)
      SELECT ?, 1, 1, v, 0, 'pending', '2026-01-01T00:00:00.000Z', ${instantKeySql('v')} FROM (SELECT '2026-12-01T10:00:00Z' AS v)\`).run(${id});
    process.stdout.write('held\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 800);
    db.exec('COMMIT');
    db.close();
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve();
    });
    child.on('close', () => reject(new Error('the other writer ended before it held the lock')));
  });
  try {
    return await during();
  } finally {
    expect(await exited).toBe(0);
  }
}

/** A fresh SQLite store holding orders with these ids, for one test, closed after it. */
async function withStore(ids: number[], test: (store: Store, file: string) => Promise<void>): Promise<void> {
  const { store, file } = freshStore(tmp.dir);
  try {
    await store.importOrders(ids.map((id) => order({ id })));
    await test(store, file);
  } finally {
    await store.close();
  }
}

describe('an import that another import overtakes between its checks and the write lock', () => {
  // Before: its largest id moves, so the import sees it before the move. Below the largest: only
  // the move itself meets the taken id.
  test.each([
    ['an empty store', [], [7]],
    ['a store whose largest id stays', [10], [7, 10]],
  ])('reports an id the other one took meanwhile, by its record, and imports nothing (%s)', (_, before, after) =>
    withStore(before, async (store, file) => {
      const result = await whileAnotherWriterAdds(file, 7, () =>
        store.importOrders([order({ id: 5 }), order({ id: 7 }), order({ id: 9 })]).catch((err: unknown) => err),
      );

      expect(result).toBeInstanceOf(ImportConflictError);
      expect(result).toMatchObject({ index: 1, conflict: { kind: 'id_taken', id: 7 } });
      expect(rowsOf(file).map((row) => row.id)).toEqual(after);
    }),
  );

  test('numbers the records without an id after the largest id the other one added', () =>
    withStore([10], async (store, file) => {
      const imported = await whileAnotherWriterAdds(file, 100, () => store.importOrders([order(), order({ id: 50 }), order()]));

      expect(imported).toBe(3);
      expect(rowsOf(file).map((row) => row.id)).toEqual([10, 50, 100, 101, 102]);
    }));

  test('goes ahead as checked when the other one added an order that changes nothing for it', () =>
    withStore([10], async (store, file) => {
      await whileAnotherWriterAdds(file, 3, () => store.importOrders([order({ id: 4 }), order()]));

      expect(rowsOf(file).map((row) => row.id)).toEqual([3, 4, 10, 11]);
    }));
});
