import path from 'node:path';
import { openSqliteStore } from '../../../src/store';
import { order } from '../../helpers/stores';
import { tempDir } from '../../helpers/temp-dir';

const tmp = tempDir();
afterAll(tmp.cleanup);
afterEach(() => jest.useRealTimers());

/** Longer than the poll by which a SQLite store watches for other processes' commits. */
const POLLS = 1000;

// A commit wakes a store's watchers once: at once when this process made it or was told of it, or
// at the next poll of the file when another process made it unannounced. Fake timers run the polls.
describe("a SQLite store's watchers", () => {
  test('are woken once by a commit this process makes, not again by the poll', async () => {
    const store = openSqliteStore(path.join(tmp.dir, 'own.db'));
    jest.useFakeTimers();
    let wakes = 0;
    const unwatch = store.watchEvents(() => (wakes += 1));
    try {
      await store.importOrders([order({ id: 1 })]);
      expect(wakes).toBe(1);
      jest.advanceTimersByTime(POLLS);
      expect(wakes).toBe(1);
    } finally {
      unwatch();
      await store.close();
    }
  });

  test("are woken once by another process's commit it is told of, and by the poll of one it is not", async () => {
    const file = path.join(tmp.dir, 'shared.db');
    const watched = openSqliteStore(file);
    const other = openSqliteStore(file);
    jest.useFakeTimers();
    let wakes = 0;
    const unwatch = watched.watchEvents(() => (wakes += 1));
    try {
      // As the server tells its delivery thread of each commit it makes.
      await other.importOrders([order({ id: 1 })]);
      watched.toldOfCommit();
      expect(wakes).toBe(1);
      jest.advanceTimersByTime(POLLS);
      expect(wakes).toBe(1);

      // A commit no one tells of (the CLI, another server on the file) is found by the poll.
      await other.importOrders([order({ id: 2 })]);
      expect(wakes).toBe(1);
      jest.advanceTimersByTime(POLLS);
      expect(wakes).toBe(2);
    } finally {
      unwatch();
      await Promise.all([watched.close(), other.close()]);
    }
  });
});
