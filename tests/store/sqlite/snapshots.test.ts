import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config';
import { openStore } from '../../../src/store/open';
import { openSqliteStore } from '../../../src/store';
import { IDLE_CLOSE_MS, KEPT_IDLE, ReaderPool } from '../../../src/store/sqlite/snapshots';
import type { ListedRow } from '../../../src/store/sql';
import { order } from '../../helpers/stores';
import { tempDir } from '../../helpers/temp-dir';

const tmp = tempDir();
afterAll(tmp.cleanup);

/** Reads a snapshot to its end, 4 orders at a time. */
async function ids(snapshot: ReturnType<ReaderPool['open']>): Promise<number[]> {
  const all: number[] = [];
  for (let chunk = await snapshot.read(4); chunk.length > 0; chunk = await snapshot.read(4)) all.push(...chunk.map((o) => o.id));
  await snapshot.close();
  return all;
}

describe('a reader snapshot given the first page another transaction read', () => {
  const file = path.join(tmp.dir, 'orders.db');
  const pool = new ReaderPool(file, 1000);
  let etag = '';

  beforeAll(async () => {
    const store = openSqliteStore(file);
    await store.importOrders(Array.from({ length: 10 }, (_, i) => order({ id: i + 1 })));
    etag = await store.listEtag();
    await store.close();
  });
  afterAll(() => pool.close());

  test('with the same ETag, takes those rows as its first and reads on after them', async () => {
    // Rows the file does not hold: taken as they are, so they show that the page was not read again.
    const rows: ListedRow[] = [
      [1, 900, 9, '2026-01-01T00:00:00Z', 0],
      [2, 900, 9, '2026-01-01T00:00:00Z', 0],
      [3, 900, 9, '2026-01-01T00:00:00Z', 0],
    ];
    const snapshot = pool.open({ etag, rows });

    expect(snapshot.etag).toBe(etag);
    const first = await snapshot.read(2);
    expect(first.map((o) => o.petId)).toEqual([900, 900]);
    expect([...first.map((o) => o.id), ...(await ids(snapshot))]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test('with another ETag (the list changed in between), reads its own list from the start', async () => {
    const rows: ListedRow[] = [[1, 900, 9, '2026-01-01T00:00:00Z', 0]];
    const snapshot = pool.open({ etag: 'W/"other-1"', rows });

    expect(await ids(snapshot)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('the reader pool', () => {
  const file = path.join(tmp.dir, 'pool.db');
  const all = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

  beforeAll(async () => {
    const store = openSqliteStore(file);
    await store.importOrders(all.map((id) => order({ id })));
    await store.close();
  });
  afterEach(() => jest.useRealTimers());

  /** Opens `count` snapshots at once, then reads each to its end. */
  async function listsAtOnce(pool: ReaderPool, count: number): Promise<void> {
    const snapshots = Array.from({ length: count }, () => pool.open());
    expect(pool.idleCount).toBe(0);
    for (const snapshot of snapshots) expect(await ids(snapshot)).toEqual(all);
  }

  test('keeps the readers of lists read side by side for the next ones, up to its limit', async () => {
    const pool = new ReaderPool(file, 1000, 8);
    try {
      await listsAtOnce(pool, 10);
      // Lists read side by side as often as a server's do would otherwise open and close a connection each.
      expect(pool.idleCount).toBe(8);
      await listsAtOnce(pool, 8);
      expect(pool.idleCount).toBe(8);
    } finally {
      pool.close();
    }
    expect(pool.idleCount).toBe(0);
  });

  test('closes the readers past the first ones once they have waited IDLE_CLOSE_MS unused', async () => {
    jest.useFakeTimers();
    const pool = new ReaderPool(file, 1000, 8);
    try {
      await listsAtOnce(pool, 8);
      jest.advanceTimersByTime(IDLE_CLOSE_MS - 1);
      expect(pool.idleCount).toBe(8);
      jest.advanceTimersByTime(1);
      expect(pool.idleCount).toBe(KEPT_IDLE);
      // Those are kept however long they wait.
      jest.advanceTimersByTime(IDLE_CLOSE_MS * 10);
      expect(pool.idleCount).toBe(KEPT_IDLE);
    } finally {
      pool.close();
    }
  });

  test('counts a reader idle from its last use', async () => {
    jest.useFakeTimers();
    const pool = new ReaderPool(file, 1000, 8);
    try {
      await listsAtOnce(pool, KEPT_IDLE + 1);
      jest.advanceTimersByTime(IDLE_CLOSE_MS / 2);
      await listsAtOnce(pool, KEPT_IDLE + 1);
      // The first look finds every reader used since: none is closed yet.
      jest.advanceTimersByTime(IDLE_CLOSE_MS / 2);
      expect(pool.idleCount).toBe(KEPT_IDLE + 1);
      jest.advanceTimersByTime(IDLE_CLOSE_MS / 2);
      expect(pool.idleCount).toBe(KEPT_IDLE);
    } finally {
      pool.close();
    }
  });
});

/**
 * How many connections of this process are open to the database `file`: each holds its write-ahead
 * log open once. (The database file itself cannot be counted: SQLite keeps a closed connection's
 * descriptor of it open for reuse while another connection holds a lock on it.)
 */
function connectionsTo(file: string): number {
  const target = fs.realpathSync(`${file}-wal`);
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false; // closed since it was listed
    }
  }).length;
}

(process.platform === 'linux' ? test : test.skip)(
  "a server's store keeps a reader for every list its admission limit lets run at once",
  async () => {
    const file = path.join(tmp.dir, 'server.db');
    const store = await openStore(loadConfig({ PETSTORE_ADMISSION_LIMIT: '8' }, { dbPath: file }));
    try {
      // Longer than a snapshot's first page (its prefetch), so each list is read on a reader of its own.
      await store.importOrders(Array.from({ length: 12 }, (_, i) => order({ id: i + 1 })));
      const before = connectionsTo(file);
      const lists = await Promise.all(Array.from({ length: 8 }, () => store.snapshotOrders(5)));
      for (const list of lists) expect(await ids(list)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(connectionsTo(file) - before).toBe(8);
    } finally {
      await store.close();
    }
  },
);
