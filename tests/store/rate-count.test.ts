import Database from 'better-sqlite3';
import type { RateCount } from '../../src/store';
import { drive, type SyncQueryable } from '../../src/store/dialect';
import { countAllSteps, rateSql, type CountRequest } from '../../src/store/rates';
import { sqliteConnection, sqliteDialect } from '../../src/store/sqlite/dialect';
import { eachStore, freshStore } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

const tmp = tempDir();
afterAll(tmp.cleanup);

// A key's rate-limit count in each store when many requests are counted at once (the requests of
// one turn of the event loop): exactly as many admitted as the quota leaves, each told the count
// its own admission made, and a refused request uncounted. Units of an hour and a day, so that no
// window ends within a test.

/** The count each admitted request was told (by its day window), and how many were refused. */
function tally(counts: readonly RateCount[]): { admitted: number[]; refused: number } {
  return {
    admitted: counts.filter((count) => count.admitted).map((count) => count.windows.day.used),
    refused: counts.filter((count) => !count.admitted).length,
  };
}

eachStore((suite) => {
  test('requests counted together are admitted up to the quota and no further, each told its own count', async () => {
    const counts = await Promise.all(Array.from({ length: 10 }, () => Promise.resolve(suite.store.countRequest('together', { day: 7 }))));

    const { admitted, refused } = tally(counts);
    expect([...admitted].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(refused).toBe(3);
    for (const count of counts.filter((each) => !each.admitted)) expect(count.windows.day.used).toBe(7);
    // Every unit counts every admitted request.
    for (const count of counts.filter((each) => each.admitted)) expect(count.windows.h.used).toBe(count.windows.day.used);
    expect((await suite.store.countRequest('together', { day: 7 })).admitted).toBe(false);
  });

  test('keys counted together keep their own counts, and a later batch counts on from where they stand', async () => {
    const ask = (keyName: string, quotas: { h?: number; day?: number }) => Promise.resolve(suite.store.countRequest(keyName, quotas));
    const first = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? ask('small', { day: 3 }) : ask('large', { h: 100 }))),
    );
    const small = tally(first.filter((_, i) => i % 2 === 0));
    const large = tally(first.filter((_, i) => i % 2 === 1));
    expect([...small.admitted].sort((a, b) => a - b)).toEqual([1, 2, 3]);
    expect(small.refused).toBe(3);
    expect([...large.admitted].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);

    const second = await Promise.all(Array.from({ length: 150 }, () => ask('large', { h: 100 })));
    expect([...tally(second).admitted].sort((a, b) => a - b)).toEqual(Array.from({ length: 94 }, (_, i) => i + 7));
    expect(tally(second).refused).toBe(56);
  });

  test('the tightest quota bounds a batch: a quota of one admits one of many, whatever the others leave', async () => {
    const counts = await Promise.all(
      Array.from({ length: 5 }, () => Promise.resolve(suite.store.countRequest('tight', { h: 1, day: 1000 }))),
    );
    expect(tally(counts)).toEqual({ admitted: [1], refused: 4 });
  });
});

test('on SQLite, the requests counted together are admitted in the order they were made', async () => {
  const { store } = freshStore(tmp.dir);
  try {
    const counts = await Promise.all(Array.from({ length: 10 }, () => Promise.resolve(store.countRequest('ordered', { day: 4 }))));
    expect(counts.map((count) => (count.admitted ? count.windows.day.used : 'refused'))).toEqual([
      1,
      2,
      3,
      4,
      ...Array<string>(6).fill('refused'),
    ]);
  } finally {
    await store.close();
  }
});

test("one statement counts a key's requests made together while all of them fit, and each goes alone once they do not", async () => {
  const { store, file } = freshStore(tmp.dir);
  await store.close();
  const db = new Database(file);
  try {
    const connection = sqliteConnection(db);
    const texts: string[] = [];
    const recorded: SyncQueryable = {
      run: (one) => connection.run(one),
      rows: (one) => {
        texts.push(one.text);
        return connection.rows(one);
      },
    };
    const sql = rateSql(sqliteDialect.clock);
    const requests = (keyName: string, n: number, quotas: CountRequest['quotas']) => Array.from({ length: n }, () => ({ keyName, quotas }));

    const counted = drive(countAllSteps(sql, [...requests('a', 20, { day: 1000 }), ...requests('b', 5, { h: 50 })]), recorded);
    expect(texts).toEqual([sql.count, sql.count]);
    expect(counted.map((count) => count.windows.day.used)).toEqual([...Array.from({ length: 20 }, (_, i) => i + 1), 1, 2, 3, 4, 5]);

    // Three left in the day: a statement for all five refuses, then each goes alone.
    texts.length = 0;
    drive(countAllSteps(sql, requests('c', 997, { day: 1000 })), recorded);
    texts.length = 0;
    const tight = drive(countAllSteps(sql, requests('c', 5, { day: 1000 })), recorded);
    expect(tight.map((count) => count.admitted)).toEqual([true, true, true, false, false]);
    expect(texts).toEqual([sql.count, sql.count, sql.count, sql.count, sql.count, sql.read, sql.count, sql.read]);

    // A quota of one leaves nothing to count together: each goes alone from the start.
    texts.length = 0;
    const single = drive(countAllSteps(sql, requests('d', 3, { h: 1 })), recorded);
    expect(single.map((count) => count.admitted)).toEqual([true, false, false]);
    expect(texts).toEqual([sql.count, sql.count, sql.read, sql.count, sql.read]);
  } finally {
    db.close();
  }
});
