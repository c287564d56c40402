import request from 'supertest';
import { createApp } from '../../../src/app';
import { createMetrics } from '../../../src/metrics';
import { ImportConflictError } from '../../../src/store';
import { expectConforms, sendExample } from '../../helpers/contract';
import { readEvents } from '../../helpers/feed';
import { addKey, eachStore, order } from '../../helpers/stores';

// placeOrder (POST /v3/store/orders) on both stores: a new pending order, placed exactly once per
// API key and Idempotency-Key.
eachStore((s) => {
  const NEW = { petId: 101, quantity: 2, shipDate: '2026-12-01T09:30:00+01:00' };
  const place = (app: Parameters<typeof request>[0], key: string | undefined, body: unknown = NEW, auth = s.auth) => {
    const req = request(app).post('/v3/store/orders').set(auth).set('Content-Type', 'application/json');
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(JSON.stringify(body));
  };
  const countOrders = async () => (await s.store.pageOrders({ filter: {}, limit: 1000 })).length;

  describe('placeOrder', () => {
    test('a request built from the document gets a success reply the contract allows', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'placeOrder', s.auth, 'v3');

      expect(res.status).toBe(201);
      await expectConforms(res, 'placeOrder', 'v3');
    });

    test('201 with the pending order and its Location; the order and its order.created event are there', async () => {
      const app = await createApp({ store: s.store });
      const start = await request(app).get('/v3/store/order-events?from=latest').set(s.auth);

      const res = await place(app, 'first-placement');

      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), ...NEW, complete: false, status: 'pending' });
      expect(res.headers.location).toBe(`/v3/store/orders/${res.body.id as number}`);
      await expectConforms(res, 'placeOrder', 'v3');
      const read = await request(app)
        .get(res.headers.location as string)
        .set(s.auth);
      expect(read.body).toEqual(res.body);
      const { events } = await readEvents(app, s, 1, start.body.nextCursor as string, 'v3');
      expect(events).toEqual([{ type: 'order.created', orderId: res.body.id, occurredAt: expect.any(String), order: res.body }]);
    });

    test('the same key and body replay the first answer byte for byte, whatever order the fields came in; one order', async () => {
      const metrics = createMetrics();
      const app = await createApp({ store: s.store, metrics });

      const first = await place(app, 'k-1');
      const again = await place(app, 'k-1', { shipDate: NEW.shipDate, quantity: 2, petId: 101 });

      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.location).toBe(first.headers.location);
      expect(await countOrders()).toBe(1);
      const text = await metrics.registry.metrics();
      expect(text).toContain('petstore_placements_total{outcome="placed"} 1');
      expect(text).toContain('petstore_placements_total{outcome="replayed"} 1');
    });

    test('the same key with another body is a 422 idempotency_key_reused, and places nothing', async () => {
      const app = await createApp({ store: s.store });
      await place(app, 'k-2');

      const res = await place(app, 'k-2', { ...NEW, quantity: 3 });

      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        code: 'idempotency_key_reused',
        message: 'This Idempotency-Key was used with another request body',
        status: 422,
      });
      await expectConforms(res, 'placeOrder', 'v3');
      expect(await countOrders()).toBe(1);
    });

    test.each([
      ['no Idempotency-Key', undefined, NEW, 'Idempotency-Key'],
      ['an Idempotency-Key of 256 characters', 'k'.repeat(256), NEW, 'Idempotency-Key'],
      ['an Idempotency-Key with a space', 'two words', NEW, 'Idempotency-Key'],
      ['quantity 0', 'q0', { ...NEW, quantity: 0 }, 'quantity'],
      ['quantity 1001', 'q1001', { ...NEW, quantity: 1001 }, 'quantity'],
      ['no shipDate', 'no-date', { petId: 1, quantity: 1 }, 'shipDate'],
      ['a shipDate without a time zone', 'local', { ...NEW, shipDate: '2026-12-01T09:30:00' }, 'shipDate'],
      ['a field the schema does not have', 'extra', { ...NEW, id: 7 }, 'id'],
    ])('%s is a 400 naming it, and places nothing', async (_case, key, body, named) => {
      const res = await place(await createApp({ store: s.store }), key, body);

      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.message).toContain(named);
      await expectConforms(res, 'placeOrder', 'v3');
      expect(await countOrders()).toBe(0);
    });

    test('a key without orders:place gets the 403, and places nothing', async () => {
      const reader = await addKey(s.store, 'reader', ['orders:read', 'orders:cancel']);

      const res = await place(await createApp({ store: s.store }), 'k-3', NEW, { Authorization: `Bearer ${reader}` });

      expect(res.status).toBe(403);
      expect(res.body.code).toBe('insufficient_scope');
      expect(res.headers['www-authenticate']).toContain('scope="orders:place"');
      expect(await countOrders()).toBe(0);
    });

    test('the same Idempotency-Key under two API keys places two orders', async () => {
      const app = await createApp({ store: s.store });
      const other = await addKey(s.store, 'other');

      const mine = await place(app, 'shared-key');
      const theirs = await place(app, 'shared-key', NEW, { Authorization: `Bearer ${other}` });

      expect([mine.status, theirs.status]).toEqual([201, 201]);
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect(await countOrders()).toBe(2);
    });

    test("a placed order's id is above every id the store has had; an import that names it is refused, naming it", async () => {
      await s.store.importOrders([order({ id: 5 }), order({ id: 40 })]);
      await s.store.cancelOrder(40);

      const res = await place(await createApp({ store: s.store }), 'after-import');

      expect(res.body.id).toBe(41);
      const refused = await s.store.importOrders([order({ id: 41 })]).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ImportConflictError);
      expect(String(refused)).toContain('41');
    });

    test('20 concurrent placements with one key make exactly one order; each answer is its 201 or a 409 to retry', async () => {
      const second = await s.fresh.another();
      try {
        const apps = [await createApp({ store: s.store }), await createApp({ store: second })];

        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => place(apps[i % 2]!, 'raced')));

        const placed = answers.filter((res) => res.status === 201);
        const busy = answers.filter((res) => res.status === 409);
        expect(placed.length + busy.length).toBe(20);
        expect(placed.length).toBeGreaterThanOrEqual(1);
        expect(new Set(placed.map((res) => res.text)).size).toBe(1);
        for (const res of busy) {
          expect(res.body.code).toBe('idempotency_key_in_use');
          expect(res.headers['retry-after']).toBe('1');
        }
        expect(await countOrders()).toBe(1);
        // A retry of a refused one, now that the first has finished, gets the first answer.
        expect((await place(apps[1]!, 'raced')).text).toBe(placed[0]!.text);
      } finally {
        await second.close();
      }
    });

    test("an expired key's record places afresh, and is pruned", async () => {
      const placement = {
        keyName: 'suite',
        idempotencyKey: 'old',
        fingerprint: 'f',
        order: NEW,
      };
      const first = await s.store.placeOrder({ ...placement, keptSince: '2000-01-01T00:00:00.000Z' });
      const kept = await s.store.placeOrder({ ...placement, keptSince: '2000-01-01T00:00:00.000Z' });
      const expired = await s.store.placeOrder({ ...placement, keptSince: '2999-01-01T00:00:00.000Z' });

      expect(first.outcome).toBe('placed');
      expect(kept).toEqual({ outcome: 'replayed', order: first.outcome === 'placed' ? first.order : undefined });
      expect(expired.outcome).toBe('placed');
      expect(await countOrders()).toBe(2);
      expect(await s.store.pruneIdempotencyKeys('2999-01-01T00:00:00.000Z')).toBe(1);
      expect(await s.store.pruneIdempotencyKeys('2999-01-01T00:00:00.000Z')).toBe(0);
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'placeOrder', {}, 'v3');

      expect(res.status).toBe(401);
      await expectConforms(res, 'placeOrder', 'v3');
    });
  });
});
