import request from 'supertest';
import { createApp } from '../../../src/app';
import { EventFeed } from '../../../src/feed/event-feed';
import { expectConforms, sendExample } from '../../helpers/contract';
import { readEvents, type FeedPage } from '../../helpers/feed';
import { eachStore, order, recordsOf } from '../../helpers/stores';
import { until } from '../../helpers/wait';

// listOrderEvents (GET /v2/store/order-events), the change feed, on both stores.

eachStore((s) => {
  describe('listOrderEvents', () => {
    test('a request built from the document gets a success reply the contract allows', async () => {
      await s.store.importOrders([order({ id: 42 })]);

      const res = await sendExample(await createApp({ store: s.store }), 'listOrderEvents', s.auth, 'v2');

      expect(res.status).toBe(200);
      await expectConforms(res, 'listOrderEvents', 'v2');
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'listOrderEvents', {}, 'v2');

      expect(res.status).toBe(401);
      await expectConforms(res, 'listOrderEvents', 'v2');
    });

    test('every change is an event, from every source, in the order they committed', async () => {
      const app = await createApp({ store: s.store });
      await s.store.importOrders([
        order({ id: 1, petId: 101, shipDate: '2026-12-01T09:30:00+01:00' }),
        order({ id: 2, status: 'shipped', complete: true }),
        order({ id: 3 }),
        order({ id: 4 }),
      ]);
      expect((await request(app).delete('/v1/store/orders/3').set(s.auth)).status).toBe(204);
      expect(await s.store.shipOrder(1)).toBe('shipped');
      expect((await request(app).delete('/v2/store/orders/4').set(s.auth)).status).toBe(204);

      const { events } = await readEvents(app, s, 7);

      expect(events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual([
        'order.created 1',
        'order.created 2',
        'order.created 3',
        'order.created 4',
        'order.cancelled 3',
        'order.shipped 1',
        'order.cancelled 4',
      ]);
      // Each event shows the order as the change left it, whatever happened to it later.
      expect(events[0]!.order).toEqual({
        id: 1,
        petId: 101,
        quantity: 1,
        shipDate: '2026-12-01T09:30:00+01:00',
        complete: false,
        status: 'pending',
      });
      expect(events[1]!.order).toMatchObject({ id: 2, status: 'shipped', complete: true });
      expect(events[2]!.order).toMatchObject({ id: 3, status: 'pending' });
      expect(events[5]!.order).toMatchObject({ id: 1, status: 'shipped' });
      expect(events[4]).not.toHaveProperty('order');
      expect(events[6]).not.toHaveProperty('order');
      for (const event of events) expect(Date.parse(event.occurredAt)).toBeGreaterThan(Date.now() - 60_000);
    });

    test('a change that did not happen leaves no event: a refused import, a cancel of a shipped order', async () => {
      const app = await createApp({ store: s.store });
      await s.store.importOrders([order({ id: 1, status: 'shipped' })]);
      await expect(s.store.importOrders([order({ id: 5 }), order({ id: 1 })])).rejects.toThrow(/already taken/);
      expect((await request(app).delete('/v2/store/orders/1').set(s.auth)).status).toBe(409);
      expect(await s.store.shipOrder(1)).toBe('already_shipped');
      await s.store.importOrders([order({ id: 9 })]);

      const { events } = await readEvents(app, s, 2);

      expect(events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual(['order.created 1', 'order.created 9']);
    });

    test('nextCursor is never null: reading on from it gives only later events, and an empty page keeps it', async () => {
      const app = await createApp({ store: s.store });
      await s.store.importOrders([order({ id: 1 }), order({ id: 2 }), order({ id: 3 })]);

      // wait: on PostgreSQL another test's transaction on the cluster may hold the import's events back a moment.
      const first = await request(app).get('/v2/store/order-events?limit=2&wait=5').set(s.auth);
      expect(first.status).toBe(200);
      expect(first.body.events.map((e: { orderId: number }) => e.orderId)).toEqual([1, 2]);
      const second = await readEvents(app, s, 1, first.body.nextCursor);
      expect(second.events.map((e) => e.orderId)).toEqual([3]);

      const empty = await request(app).get('/v2/store/order-events').query({ after: second.cursor }).set(s.auth);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ events: [], nextCursor: second.cursor });
      await expectConforms(empty, 'listOrderEvents', 'v2');

      await s.store.cancelOrder(2);
      const later = await readEvents(app, s, 1, second.cursor);
      expect(later.events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual(['order.cancelled 2']);
    });

    test('an empty store has a cursor too, and from=latest starts after what has committed', async () => {
      const app = await createApp({ store: s.store });
      const nothing = await request(app).get('/v2/store/order-events').set(s.auth);
      expect(nothing.status).toBe(200);
      expect(nothing.body.events).toEqual([]);
      expect(nothing.body.nextCursor).toMatch(/^[A-Za-z0-9_.-]+$/);

      await s.store.importOrders([order({ id: 1 }), order({ id: 2 })]);
      await readEvents(app, s, 2);
      const latest = await request(app).get('/v2/store/order-events?from=latest').set(s.auth);
      expect(latest.status).toBe(200);
      expect(latest.body.events).toEqual([]);
      await expectConforms(latest, 'listOrderEvents', 'v2');

      await s.store.cancelOrder(1);
      const { events } = await readEvents(app, s, 1, latest.body.nextCursor);
      expect(events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual(['order.cancelled 1']);
    });

    test('a bad request is a 400 that names what is wrong', async () => {
      const app = await createApp({ store: s.store });
      const { nextCursor } = (await request(app).get('/v2/store/order-events').set(s.auth)).body as FeedPage;
      await s.store.importOrders(Array.from({ length: 3 }, (_, i) => order({ id: i + 1 })));
      const listCursor = (await request(app).get('/v2/store/orders?limit=1').set(s.auth)).body.nextCursor as string;
      const cases: Array<[string, RegExp]> = [
        [`after=${nextCursor}&from=oldest`, /^from is only for a first read/],
        // The signature's last character swapped for another, so that the cursor is never the one issued.
        [`after=${nextCursor.slice(0, -1)}${nextCursor.endsWith('A') ? 'B' : 'A'}`, /^after is not one this server issued/],
        [`after=${listCursor}`, /^after is not a cursor of the change feed/],
        ['from=newest', /from/],
        ['limit=0', /limit/],
        ['limit=1001', /limit/],
        ['wait=31', /wait/],
        ['wait=-1', /wait/],
        ['wait=1.5', /wait/],
        ['cursor=abc', /cursor/],
      ];
      for (const [query, message] of cases) {
        const res = await request(app).get(`/v2/store/order-events?${query}`).set(s.auth);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.body).toMatchObject({ code: 'invalid_request', status: 400, message: expect.stringMatching(message) });
        await expectConforms(res, 'listOrderEvents', 'v2');
      }
    });

    test('wait: answered as soon as a change commits; with none, an empty page once the time is up', async () => {
      const feed = new EventFeed(s.store);
      const app = await createApp({ store: s.store, feed });
      await s.store.importOrders([order({ id: 1 })]);
      const { cursor } = await readEvents(app, s, 1);

      const waiting = request(app).get('/v2/store/order-events').query({ after: cursor, wait: 20 }).set(s.auth);
      const answered = waiting.then((res) => ({ res, at: Date.now() }));
      await until(() => feed.waiting === 1, 'the read waits');
      await s.store.cancelOrder(1);
      const committed = Date.now();
      const { res, at } = await answered;
      expect(res.status).toBe(200);
      expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['order.cancelled']);
      // Well within the 20 s asked for: woken by the commit (the bench measures how soon).
      expect(at - committed).toBeLessThan(5000);

      const timed = Date.now();
      const none = await request(app).get('/v2/store/order-events').query({ after: res.body.nextCursor, wait: 1 }).set(s.auth);
      expect(none.status).toBe(200);
      expect(none.body).toEqual({ events: [], nextCursor: res.body.nextCursor });
      expect(Date.now() - timed).toBeGreaterThanOrEqual(900);
    });

    test('wait is woken by a commit in another instance of the store', async () => {
      const feed = new EventFeed(s.store);
      const app = await createApp({ store: s.store, feed });
      await s.store.importOrders([order({ id: 1 })]);
      const { cursor } = await readEvents(app, s, 1);
      const other = await s.fresh.another();
      try {
        const waiting = request(app).get('/v2/store/order-events').query({ after: cursor, wait: 25 }).set(s.auth);
        const answered = waiting.then((res) => ({ res, at: Date.now() }));
        await until(() => feed.waiting === 1, 'the read waits');
        await other.shipOrder(1);
        const committed = Date.now();
        const { res, at } = await answered;
        expect(res.status).toBe(200);
        expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['order.shipped']);
        expect(at - committed).toBeLessThan(5000);
      } finally {
        await other.close();
      }
    });

    test('at most the configured number of requests wait; one more is a 503 with Retry-After', async () => {
      const feed = new EventFeed(s.store, { maxWaiting: 2 });
      const app = await createApp({ store: s.store, feed });
      const { nextCursor } = (await request(app).get('/v2/store/order-events').set(s.auth)).body as FeedPage;
      const waiting = [1, 2].map(() =>
        request(app)
          .get('/v2/store/order-events')
          .query({ after: nextCursor, wait: 20 })
          .set(s.auth)
          .then((res) => res),
      );
      await until(() => feed.waiting === 2, 'both reads wait for events');

      const refused = await request(app).get('/v2/store/order-events').query({ after: nextCursor, wait: 20 }).set(s.auth);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body).toEqual({
        code: 'service_unavailable',
        message: '2 requests are already waiting for events; retry later',
        status: 503,
      });
      await expectConforms(refused, 'listOrderEvents', 'v2');
      // Without wait, a read is never refused.
      expect((await request(app).get('/v2/store/order-events').query({ after: nextCursor }).set(s.auth)).status).toBe(200);

      // Closing answers the waiting requests at once, each with an empty page and its cursor.
      feed.close();
      for (const res of await Promise.all(waiting)) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ events: [], nextCursor });
      }
      expect(feed.waiting).toBe(0);
    });

    test('events are kept for the retention; a cursor before the events kept is a 400 that says what to do', async () => {
      const app = await createApp({ store: s.store });
      await s.store.importOrders([order({ id: 1 }), order({ id: 2 })]);
      const { cursor: beforeCancel } = await readEvents(app, s, 2);
      const start = (await request(app).get('/v2/store/order-events?limit=1').set(s.auth)).body as FeedPage;

      // Nothing is old enough yet.
      expect(await s.store.pruneEvents(new Date(Date.now() - 86_400_000).toISOString())).toBe(0);
      await s.store.cancelOrder(2);
      await readEvents(app, s, 1, beforeCancel);
      // Everything that occurred before a second from now is past it.
      expect(await s.store.pruneEvents(new Date(Date.now() + 1000).toISOString())).toBe(3);

      const expired = await request(app).get('/v2/store/order-events').query({ after: start.nextCursor }).set(s.auth);
      expect(expired.status).toBe(400);
      expect(expired.body).toEqual({
        code: 'invalid_request',
        message: 'after is older than the events kept (30 days): list the orders again, and read on from from=latest',
        status: 400,
      });
      await expectConforms(expired, 'listOrderEvents', 'v2');
      // from=oldest and from=latest both start after what was removed; a later change comes through both.
      const oldest = (await request(app).get('/v2/store/order-events').set(s.auth)).body as FeedPage;
      const latest = (await request(app).get('/v2/store/order-events?from=latest').set(s.auth)).body as FeedPage;
      expect(oldest.events).toEqual([]);
      await s.store.cancelOrder(1);
      for (const cursor of [oldest.nextCursor, latest.nextCursor]) {
        const { events } = await readEvents(app, s, 1, cursor);
        expect(events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual(['order.cancelled 1']);
      }
    });

    test('the sync recipe: latest cursor, walk the pages, tail the feed; the mirror ends equal to the store under a concurrent writer', async () => {
      const app = await createApp({ store: s.store });
      await s.store.importOrders(Array.from({ length: 60 }, (_, i) => order({ id: i + 1, petId: (i % 7) + 1 })));
      const mirror = new Map<number, unknown>();
      const { nextCursor: start } = (await request(app).get('/v2/store/order-events?from=latest').set(s.auth)).body as FeedPage;

      // A writer cancels and ships while the consumer walks the pages, and imports more: the
      // events it makes are awaited below.
      const awaited = new Set<string>();
      const writer = (async () => {
        for (let id = 1; id <= 60; id += 3) {
          expect(await s.store.cancelOrder(id)).toBe('cancelled');
          awaited.add(`order.cancelled ${id}`);
          expect(await s.store.shipOrder(id + 1)).toBe('shipped');
          awaited.add(`order.shipped ${id + 1}`);
        }
        expect(await s.store.importOrders([order({ id: 100 }), order({ id: 101, status: 'shipped' })])).toBe(2);
        awaited.add('order.created 100').add('order.created 101');
      })();
      let cursor: string | null = null;
      do {
        const res = await request(app)
          .get('/v2/store/orders')
          .query({ limit: 7, ...(cursor === null ? {} : { cursor }) })
          .set(s.auth);
        expect(res.status).toBe(200);
        for (const each of res.body.orders as Array<{ id: number }>) mirror.set(each.id, each);
        cursor = res.body.nextCursor as string | null;
      } while (cursor !== null);
      await writer;

      // Tail until every event the writer made is applied, each as it says (and any before them:
      // the feed is in order). A read that finds nothing is not the end: on PostgreSQL a
      // transaction elsewhere on the cluster (another test's) holds events back until it ends, the
      // start cursor among them, and `wait` waits a second at most.
      let after = start;
      while (awaited.size > 0) {
        const res = await request(app).get('/v2/store/order-events').query({ after, wait: 1, limit: 5 }).set(s.auth);
        expect(res.status).toBe(200);
        const page = res.body as FeedPage;
        for (const event of page.events) {
          if (event.type === 'order.cancelled') mirror.delete(event.orderId);
          else mirror.set(event.orderId, event.order);
          awaited.delete(`${event.type} ${event.orderId}`);
        }
        after = page.nextCursor;
      }

      const orders = (await recordsOf(s.store)).map((each) => [each.id, each] as const);
      expect(new Map(orders)).toEqual(mirror);
      expect(mirror.size).toBe(42);
    });
  });
});
