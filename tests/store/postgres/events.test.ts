import pg from 'pg';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { EVENTS_CHANNEL, EVENTS_SQL, listenForEvents } from '../../../src/store/postgres/events';
import { silentLogger } from '../../../src/logger';
import { EventFeed } from '../../../src/feed/event-feed';
import { openPostgresStore, type EventPosition, type OrderEventRecord, type Store } from '../../../src/store';
import { freshDatabase } from '../../helpers/postgres';
import { addKey, order, withOverrides } from '../../helpers/stores';
import { until } from '../../helpers/wait';

// The change feed on PostgreSQL, where transactions commit in any order: no event is ever skipped
// or repeated, whichever instance writes it.
const pgTest = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? describe : describe.skip;

/**
 * Reads the store's feed on from `after` until `count` events have come. An event shows only once
 * every older transaction of the cluster has ended, and under a loaded suite other files' can run
 * for many seconds, so it waits as long as this file's other waits for that (its tests allow 180 s).
 */
async function readUntil(
  store: Store,
  after: EventPosition | 'oldest',
  count: number,
): Promise<{ events: OrderEventRecord[]; next: EventPosition }> {
  const events: OrderEventRecord[] = [];
  let at = after;
  const deadline = Date.now() + 120_000;
  while (events.length < count) {
    if (Date.now() > deadline) throw new Error(`the feed gave ${events.length} events, not ${count}`);
    const page = await store.readEvents(at, 1000);
    events.push(...page.events);
    at = page.next;
    if (page.events.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (at === 'oldest') throw new Error('no page was read');
  return { events, next: at };
}

const described = (events: readonly OrderEventRecord[]): string[] => events.map(({ type, orderId }) => `${type} ${orderId}`);

pgTest("the change feed's read on PostgreSQL, right after an import", () => {
  // An import's events land in one transaction, before the table has statistics: the read of each
  // page, and its check for events held back behind it, must still go through the index and stop,
  // never scan the events (a scan per page made tailing a large import quadratic).
  test('reads each page through the index, and finds nothing held back without a scan', async () => {
    const database = await freshDatabase();
    const store = await openPostgresStore(database.url, { poolSize: 2 });
    const client = new pg.Client({ connectionString: database.url });
    try {
      await store.importOrders(Array.from({ length: 20_000 }, (_, i) => order({ id: i + 1 })));
      // The import's events show once every older transaction of the cluster has ended.
      const first = await readUntil(store, 'oldest', 1000);
      expect(first.events.length).toBeGreaterThanOrEqual(1000);
      await client.connect();
      // No statistics, as before autovacuum's first ANALYZE of a new table.
      await client.query(`DELETE FROM pg_statistic WHERE starelid = 'order_events'::regclass`);
      const { tx, seq } = first.next;
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN ${EVENTS_SQL.read.replaceAll('$1', `'${tx}'`).replaceAll('$2', String(seq)).replaceAll('$3', '1000')}`,
      );
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).not.toMatch(/Seq Scan on order_events/);
      // Nothing after the import is held back, once any other suite's transaction running on the
      // cluster under load has ended.
      await until(async () => (await store.readEvents(first.next, 1000)).heldBack === false, 'nothing is held back', 120_000);
    } finally {
      await client.end();
      await store.close();
      await database.drop();
    }
  }, 180_000);
});

pgTest('the change feed on PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const stores: Store[] = [];
  const open = async (): Promise<Store> => {
    const store = await openPostgresStore(database.url, { poolSize: 4 });
    stores.push(store);
    return store;
  };
  beforeEach(async () => (database = await freshDatabase()));
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await database.drop();
  });

  test('an event that took an earlier number but commits later is not skipped: later events wait for it', async () => {
    const store = await open();
    await store.importOrders([order({ id: 1 }), order({ id: 2 })]);
    const { next: start } = await readUntil(store, 'oldest', 2);

    // Another writer's transaction takes its event's number first, and stays open ...
    const writer = new pg.Client({ connectionString: database.url });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`UPDATE orders SET status = 'cancelled', cancelled_at = $1 WHERE id = 1`, [new Date().toISOString()]);
      // Its number is below any the store hands out: each connection takes its numbers in blocks, so
      // which of two connections' numbers is lower depends on the blocks they hold, not on time.
      const held = await writer.query<{ seq: string }>(
        `INSERT INTO order_events (seq, type, order_id, status, occurred_at) OVERRIDING SYSTEM VALUE
         VALUES (0, 'order.cancelled', 1, NULL, $1) RETURNING seq`,
        [new Date().toISOString()],
      );
      // ... while a cancel through the store takes a later number and commits.
      expect(await store.cancelOrder(2)).toBe('cancelled');
      const committed = await writer.query<{ seq: string }>("SELECT seq FROM order_events WHERE order_id = 2 AND type = 'order.cancelled'");
      expect(Number(committed.rows[0]!.seq)).toBeGreaterThan(Number(held.rows[0]!.seq));

      // Ordered by number alone, a reader would now get order 2's event and move past order 1's
      // number, never to see it. The feed holds order 2's back while order 1's may still come.
      expect((await store.readEvents(start, 1000)).events).toEqual([]);

      await writer.query('COMMIT');
    } finally {
      await writer.end();
    }
    const { events, next } = await readUntil(store, start, 2);
    expect(described(events)).toEqual(['order.cancelled 1', 'order.cancelled 2']);
    expect((await store.readEvents(next, 1000)).events).toEqual([]);
  }, 180_000);

  test('a waiting read woken while an older transaction holds its event back is answered once that transaction ends', async () => {
    const [store, other] = [await open(), await open()];
    let reads = 0;
    const counted = withOverrides(store, {
      readEvents: (after, limit) => {
        reads += 1;
        return store.readEvents(after, limit);
      },
    });
    const feed = new EventFeed(counted);
    const app = await createApp({ store: counted, feed });
    const auth = { Authorization: `Bearer ${await addKey(store, 'reader')}` };
    await store.importOrders([order({ id: 1 })]);
    await readUntil(store, 'oldest', 1);
    const latest = await request(app).get('/v2/store/order-events?from=latest').set(auth);

    // A transaction older than the ship takes its id and stays open: the ship's event is held back.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_current_xact_id()');
      const waiting = request(app).get('/v2/store/order-events').query({ after: latest.body.nextCursor, wait: 25 }).set(auth);
      const answered = waiting.then((res) => res);
      await until(() => feed.waiting === 1, 'the read waits');
      const readsBefore = reads;
      expect(await other.shipOrder(1)).toBe('shipped');
      // The ship's NOTIFY woke the read, which found its event held back.
      await until(() => reads > readsBefore, 'the woken read has looked');
      expect(feed.waiting).toBe(1);

      await holder.query('COMMIT');
      const res = await answered;

      expect(res.status).toBe(200);
      expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['order.shipped']);
    } finally {
      await holder.end();
    }
  }, 180_000);

  test('two instances writing at once, one reader tailing with wait: each change exactly once', async () => {
    const [a, b] = [await open(), await open()];
    const app = await createApp({ store: a });
    const key = await addKey(a, 'reader');
    const auth = { Authorization: `Bearer ${key}` };
    const ORDERS = 300;
    await a.importOrders(Array.from({ length: ORDERS }, (_, i) => order({ id: i + 1 })));
    // The import's events first show (another test's transaction on the cluster may hold them back),
    // so that the latest position is after them.
    await readUntil(a, 'oldest', ORDERS);
    const latest = await request(app).get('/v2/store/order-events?from=latest').set(auth);
    expect(latest.status).toBe(200);

    // The reader tails from the latest cursor while eight writers, on both instances, cancel and
    // ship the orders (each order moves once: a cancel and a ship of one order race), and one
    // instance imports more.
    const changes: string[] = [];
    let writing = true;
    const writers = Array.from({ length: 8 }, async (_, n) => {
      const store = n % 2 === 0 ? a : b;
      for (let id = (n % 4) + 1; id <= ORDERS; id += 4) {
        if (n < 4) {
          if ((await store.cancelOrder(id)) === 'cancelled') changes.push(`order.cancelled ${id}`);
        } else if ((await store.shipOrder(id)) === 'shipped') changes.push(`order.shipped ${id}`);
      }
    });
    const imported = (async () => {
      await b.importOrders(Array.from({ length: 500 }, (_, i) => order({ id: 1000 + i })));
      for (let i = 0; i < 500; i += 1) changes.push(`order.created ${1000 + i}`);
    })();
    const seen: string[] = [];
    const reading = (async () => {
      let after = latest.body.nextCursor as string;
      let deadline = Infinity;
      for (;;) {
        const res = await request(app).get('/v2/store/order-events').query({ after, wait: 1, limit: 64 }).set(auth);
        expect(res.status).toBe(200);
        seen.push(...described(res.body.events));
        after = res.body.nextCursor;
        // Once the writers have finished, the tail ends when it has as many events as there were
        // changes, then reads once more to see that nothing follows.
        if (!writing && deadline === Infinity) deadline = Date.now() + 10_000;
        if (!writing && seen.length >= changes.length) {
          const last = await request(app).get('/v2/store/order-events').query({ after, wait: 1 }).set(auth);
          seen.push(...described(last.body.events));
          return;
        }
        if (Date.now() > deadline) return;
      }
    })();
    await Promise.all([...writers, imported]);
    writing = false;
    await reading;

    expect(changes.length).toBe(ORDERS + 500);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...changes].sort());
  }, 180_000);
});

pgTest('commits announced to other processes', () => {
  // A process wakes its own watchers when it commits, and tells its delivery thread itself: its own
  // NOTIFY, heard back, would wake them all a second time for the same commit.
  test("a NOTIFY under the watch's own name wakes nobody; another process's does", async () => {
    const database = await freshDatabase();
    const client = new pg.Client({ connectionString: database.url });
    let wakes = 0;
    // A head that never moves: only the NOTIFYs wake.
    const stop = listenForEvents(
      database.url,
      silentLogger,
      () => (wakes += 1),
      () => Promise.resolve('0/0'),
      'this-process',
    );
    try {
      await client.connect();
      // Once it listens, it wakes its watchers for whatever committed while it did not.
      await until(() => wakes === 1, 'the watch listens');
      // Both in one transaction, so both arrive together: its own name first.
      await client.query('BEGIN');
      await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, 'this-process']);
      await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, 'another-process']);
      await client.query('COMMIT');
      await until(() => wakes >= 2, "another process's NOTIFY heard");
      expect(wakes).toBe(2);
    } finally {
      stop();
      await client.end();
      await database.drop();
    }
  });

  test('a store announces its commits under the name it was opened with, and each store has one of its own', async () => {
    const database = await freshDatabase();
    const named = await openPostgresStore(database.url, { poolSize: 2, announceAs: 'the-server' });
    const unnamed = await openPostgresStore(database.url, { poolSize: 2 });
    const client = new pg.Client({ connectionString: database.url });
    try {
      expect(named.announcesAs).toBe('the-server');
      expect(unnamed.announcesAs).toEqual(expect.any(String));
      expect(unnamed.announcesAs).not.toBe('the-server');
      await client.connect();
      const heard: string[] = [];
      client.on('notification', ({ payload }) => heard.push(payload ?? ''));
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      await named.importOrders([order({ id: 1 })]);
      await until(() => heard.length > 0, 'the NOTIFY');
      expect(heard).toEqual(['the-server']);
    } finally {
      await client.end();
      await named.close();
      await unnamed.close();
      await database.drop();
    }
  });
});
