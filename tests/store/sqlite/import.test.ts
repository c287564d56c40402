import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { ImportConflictError, type ImportRecord, type Store } from '../../../src/store';
import { instantKeySql } from '../../../src/store/date-time-sql';
import { MOVE_SQL, SLICE_MOVE_SQL, importThroughStaging, twinOfOrders, type PublishOptions } from '../../../src/store/sqlite/import';
import { configureConnection } from '../../../src/store/sqlite/store';
import { freshStore, listAll, order, rowsOf } from '../../helpers/stores';
import { tempDir } from '../../helpers/temp-dir';

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

      // Each slice of a publish in slices moves from a twin of its own, made the same way.
      const slice = twinOfOrders(db, 'import_slice');
      db.exec(slice.table);
      for (const index of slice.indexes) db.exec(index);
      const sliceMove = db
        .prepare<[], { opcode: string }>(`EXPLAIN ${SLICE_MOVE_SQL}`)
        .all()
        .map((row) => row.opcode);
      expect(sliceMove).toEqual(expect.arrayContaining(['IdxInsert']));
      expect(sliceMove).not.toContain('MakeRecord');
      expect(sliceMove).not.toContain('Column');
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

// Into a store without orders, records whose ids rise go straight into the twin; the first record
// without an id, or whose id does not rise, sends them back to the staging table, and the import
// goes on as any other: the same ids, times and errors.
describe('an import into a store without orders', () => {
  test('numbers a record without an id, met after rising ids, after the largest id of the file', () =>
    withStore([], async (store, file) => {
      const imported = await store.importOrders([
        order({ id: 5 }),
        order({ id: 7, status: 'shipped', complete: true }),
        order(),
        order({ id: 6 }),
      ]);

      expect(imported).toBe(4);
      expect(rowsOf(file).map(({ id, status, shipped_at }) => [id, status, shipped_at !== null])).toEqual([
        [5, 'pending', false],
        [6, 'pending', false],
        [7, 'shipped', true],
        [8, 'pending', false],
      ]);
    }));

  test('names the record that repeats an id met while the ids rose, and the record it repeats, and imports nothing', () =>
    withStore([], async (store, file) => {
      const result = await store
        .importOrders([order({ id: 3 }), order({ id: 5 }), order({ id: 8 }), order({ id: 5 })])
        .catch((err: unknown) => err);

      expect(result).toBeInstanceOf(ImportConflictError);
      expect(result).toMatchObject({ index: 3, conflict: { kind: 'repeated_id', id: 5, first: 1 } });
      expect(rowsOf(file)).toEqual([]);
    }));

  test('with rising ids to the end, imports them with their times and events, as any import', () =>
    withStore([], async (store, file) => {
      const records = Array.from({ length: 40 }, (_, i) =>
        order({ id: 2 * i + 1, ...(i % 5 === 0 ? { status: 'shipped', complete: true } : {}) }),
      );

      expect(await store.importOrders(records)).toBe(40);
      const rows = rowsOf(file);
      expect(rows.map((row) => row.id)).toEqual(records.map((record) => record.id));
      expect(rows.filter((row) => row.shipped_at !== null).map((row) => row.id)).toEqual([1, 11, 21, 31, 41, 51, 61, 71]);
      expect((await store.readEvents('oldest', 100)).events.map((event) => [event.type, event.orderId])).toEqual(
        records.map((record) => ['order.created', record.id]),
      );
    }));
});

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

/** An import through a connection of its own, as `orders import` makes it, with these publish options. */
async function importWith(file: string, records: ImportRecord[], options: PublishOptions): Promise<number> {
  const db = new Database(file, { timeout: 5000 });
  configureConnection(db);
  try {
    return await importThroughStaging(db, records, '2026-11-23T12:00:00.000Z', options);
  } finally {
    if (db.open) db.close();
  }
}

/** What the import publishing now has marked, straight from the file. */
function publishingRows(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT from_id FROM import_publishing').all();
  } finally {
    db.close();
  }
}

const eight = () => Array.from({ length: 8 }, () => order({ petId: 77 }));

// An import of more than a slice, whose ids all come after the orders', is published a slice per
// write transaction, so that a running server's cancels never wait for a whole import; its orders
// stay out of every read and write until the last transaction shows them all at once.
describe('an import published in slices', () => {
  test('is not needed by a store without orders, where no cancel can wait: that one moves in one transaction', () =>
    withStore([], async (store, file) => {
      const slices: number[] = [];
      const imported = await importWith(file, eight(), { sliceRows: 3, afterSlice: (slice) => void slices.push(slice) });

      expect(imported).toBe(8);
      expect(slices).toEqual([]);
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(publishingRows(file)).toEqual([]);
      expect((await listAll(store)).length).toBe(8);
    }));

  test('lets other writers in between its slices, and shows nothing of itself until its last', () =>
    withStore([1, 2], async (store, file) => {
      const seen: Array<Record<string, unknown>> = [];
      let etag = '';
      const imported = await importWith(file, eight(), {
        sliceRows: 3,
        afterSlice: async (slice) => {
          if (slice === 1) {
            // Another writer gets the lock between slices, at once.
            expect(await store.cancelOrder(1)).toBe('cancelled');
            etag = await store.listEtag();
          }
          seen.push({
            slice,
            inTheFile: rowsOf(file).length,
            listed: (await listAll(store)).map((o) => o.id),
            paged: (await store.pageOrders({ filter: {}, limit: 50 })).map((o) => o.id),
            byPet: (await store.pageOrders({ filter: { petId: 77 }, limit: 50 })).length,
            pending: (await store.pageOrders({ filter: { status: 'pending' }, limit: 50 })).map((o) => o.id),
            cancel: await store.cancelOrder(4),
            ship: await store.shipOrder(5),
            pet: await store.petExists(77),
            etag: await store.listEtag(),
          });
        },
      });

      const hidden = { listed: [2], paged: [2], byPet: 0, pending: [2], cancel: 'not_found', ship: 'not_found', pet: false, etag };
      expect(seen).toEqual([
        { slice: 1, inTheFile: 5, ...hidden },
        { slice: 2, inTheFile: 8, ...hidden },
        { slice: 3, inTheFile: 10, ...hidden },
      ]);
      expect(imported).toBe(8);
      expect((await listAll(store)).map((o) => o.id)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(await store.listEtag()).not.toBe(etag);
      expect(await store.cancelOrder(4)).toBe('cancelled');
      expect(await store.petExists(77)).toBe(true);
      expect(publishingRows(file)).toEqual([]);
    }));

  test('holds the change feed back from its first event until it shows its orders: a cancel between its slices comes after them, none skipped', () =>
    withStore([1, 2], async (store, file) => {
      const before = await store.readEvents('oldest', 100);
      expect(before.events.map((e) => `${e.type} ${e.orderId}`)).toEqual(['order.created 1', 'order.created 2']);
      const during: string[][] = [];
      await importWith(file, eight(), {
        sliceRows: 3,
        afterSlice: async (slice) => {
          if (slice === 1) expect(await store.cancelOrder(1)).toBe('cancelled');
          during.push((await store.readEvents(before.next, 100)).events.map((e) => `${e.type} ${e.orderId}`));
          expect(await store.latestEventPosition()).toEqual(before.next);
        },
      });

      expect(during).toEqual([[], [], []]);
      const after = await store.readEvents(before.next, 100);
      expect(after.events.map((e) => `${e.type} ${e.orderId}`)).toEqual([
        'order.created 3',
        'order.created 4',
        'order.created 5',
        'order.cancelled 1',
        'order.created 6',
        'order.created 7',
        'order.created 8',
        'order.created 9',
        'order.created 10',
      ]);
      expect(after.events[0]!.order).toEqual({
        id: 3,
        petId: 77,
        quantity: 1,
        shipDate: '2026-12-01T10:00:00Z',
        complete: false,
        status: 'pending',
      });
    }));

  test('that fails on the way removes its events with its orders; the events around it stay', () =>
    withStore([1, 2], async (store, file) => {
      const failed = await importWith(file, eight(), {
        sliceRows: 3,
        afterSlice: async (slice) => {
          if (slice === 1) await store.cancelOrder(2);
          if (slice === 2) throw new Error('the disk went away');
        },
      }).catch((err: unknown) => err);

      expect(failed).toEqual(new Error('the disk went away'));
      const { events } = await store.readEvents('oldest', 100);
      expect(events.map((e) => `${e.type} ${e.orderId}`)).toEqual(['order.created 1', 'order.created 2', 'order.cancelled 2']);
    }));

  test('that fails on the way removes what it had published, and the next import numbers from where the orders end', () =>
    withStore([1, 2], async (store, file) => {
      const failed = await importWith(file, eight(), {
        sliceRows: 3,
        afterSlice: (slice) => {
          if (slice === 2) throw new Error('the disk went away');
        },
      }).catch((err: unknown) => err);

      expect(failed).toEqual(new Error('the disk went away'));
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2]);
      expect(publishingRows(file)).toEqual([]);
      expect(await store.importOrders([order(), order()])).toBe(2);
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2, 3, 4]);
    }));

  test('whose importer died stays hidden, and the next import removes it once its lease has run out', () =>
    withStore([1, 2], async (store, file) => {
      const importer = new Database(file, { timeout: 5000 });
      configureConnection(importer);
      // The importer's connection goes away after two slices, as with a killed process: its clean-up cannot run.
      // Its clock runs an hour behind: the lease it writes has run out by the time the next import looks.
      const died = await importThroughStaging(importer, eight(), '2026-11-23T12:00:00.000Z', {
        sliceRows: 3,
        leaseMs: 300,
        now: () => Date.now() - 3_600_000,
        afterSlice: (slice) => {
          if (slice === 2) importer.close();
        },
      }).catch((err: unknown) => err);

      expect(String(died)).toContain('The database connection is not open');
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect((await listAll(store)).map((o) => o.id)).toEqual([1, 2]);
      expect(await store.cancelOrder(3)).toBe('not_found');

      expect(await store.importOrders([order(), order({ id: 5 })])).toBe(2);
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2, 5, 6]);
      expect((await listAll(store)).map((o) => o.id)).toEqual([1, 2, 5, 6]);
      expect(publishingRows(file)).toEqual([]);
      // Its events went with its orders: the feed shows what the store holds.
      const { events } = await store.readEvents('oldest', 100);
      expect(events.map((e) => `${e.type} ${e.orderId}`)).toEqual([
        'order.created 1',
        'order.created 2',
        'order.created 5',
        'order.created 6',
      ]);
    }));

  test('makes another import wait for it, which then numbers its records after it', () =>
    withStore([1, 2], async (store, file) => {
      let other: Promise<number> | undefined;
      const ended: string[] = [];
      await importWith(file, eight(), {
        sliceRows: 3,
        afterSlice: async (slice) => {
          if (slice !== 1) return;
          const waiting = new Promise<void>((resolve) => {
            other = importWith(file, [order(), order()], { onWait: resolve }).finally(() => ended.push('other'));
          });
          await waiting;
        },
      });
      ended.push('first');

      expect(await other).toBe(2);
      expect(ended).toEqual(['first', 'other']);
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    }));

  test('that stops past its lease is taken for abandoned: another import removes it and goes ahead, and it imports nothing', () =>
    withStore([1, 2], async (store, file) => {
      let other: Promise<number> | undefined;
      const stopped = await importWith(file, eight(), {
        sliceRows: 3,
        leaseMs: 100,
        // Its clock runs an hour behind: once it has published a slice, its lease has run out for every other import.
        now: () => Date.now() - 3_600_000,
        afterSlice: async (slice) => {
          if (slice !== 1) return;
          other = store.importOrders([order(), order()]);
          await other;
        },
      }).catch((err: unknown) => err);

      expect(await other).toBe(2);
      expect(String(stopped)).toContain('was abandoned; nothing was imported');
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2, 3, 4]);
      expect(publishingRows(file)).toEqual([]);
    }));

  // The store's own CHECKs refuse what no caller should have let through: in a publish in slices
  // too, a record past the safe range fails its slice's check, and nothing of the import stays.
  test('refuses a record with an id past the safe range under the constraint that says why, and leaves nothing', () =>
    withStore([1, 2], async (store, file) => {
      const records = [...[3, 4, 5, 6, 7].map((id) => order({ id })), order({ id: 2 ** 53 + 2 })];
      const refused = await importWith(file, records, { sliceRows: 3 }).catch((err: unknown) => err);

      expect(String(refused)).toContain('order_id_safe');
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 2]);
      expect(publishingRows(file)).toEqual([]);
    }));

  test('is used for records with ids below every order’s too, hidden by their span', () =>
    withStore([100, 101], async (store, file) => {
      const listed: number[][] = [];
      await importWith(
        file,
        [1, 2, 3, 4, 5, 6, 7].map((id) => order({ id })),
        { sliceRows: 3, afterSlice: async () => void listed.push((await listAll(store)).map((o) => o.id)) },
      );

      expect(listed).toEqual([
        [100, 101],
        [100, 101],
        [100, 101],
      ]);
      expect((await listAll(store)).map((o) => o.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 100, 101]);
    }));

  test('is not used when an order’s id falls among the records’: those move in one transaction, as before', () =>
    withStore([1, 20], async (store, file) => {
      const slices: number[] = [];
      await importWith(
        file,
        [5, 25, 6, 26, 7].map((id) => order({ id })),
        { sliceRows: 2, afterSlice: (slice) => void slices.push(slice) },
      );

      expect(slices).toEqual([]);
      expect(rowsOf(file).map((row) => row.id)).toEqual([1, 5, 6, 7, 20, 25, 26]);
    }));
});
