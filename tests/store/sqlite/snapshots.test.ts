import path from 'node:path';
import { openSqliteStore } from '../../../src/store';
import { ReaderPool } from '../../../src/store/sqlite/snapshots';
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
