import request from 'supertest';
import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { cursorAfter, readEvents } from '../../helpers/feed';
import { addKey, eachStore, order } from '../../helpers/stores';

// shipOrder (POST /v3/store/orders/{orderId}/ship) on both stores: the CLI's `orders ship`, over HTTP.
eachStore((s) => {
  describe('shipOrder', () => {
    beforeEach(() => s.store.importOrders([order({ id: 42 }), order({ id: 43, status: 'shipped', complete: true }), order({ id: 44 })]));

    test('a request built from the document gets a success reply the contract allows', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'shipOrder', s.auth, 'v3');

      expect(res.status).toBe(200);
      await expectConforms(res, 'shipOrder', 'v3');
    });

    test('200 with the shipped order; again, 409; unknown or cancelled, 404; the feed shows the one change once', async () => {
      const app = await createApp({ store: s.store });
      const start = await cursorAfter(app, s, 3, 'v3');
      await request(app).delete('/v3/store/orders/44').set(s.auth);

      const shipped = await request(app).post('/v3/store/orders/42/ship').set(s.auth);
      const again = await request(app).post('/v3/store/orders/42/ship').set(s.auth);
      const cancelled = await request(app).post('/v3/store/orders/44/ship').set(s.auth);
      const unknown = await request(app).post('/v3/store/orders/7/ship').set(s.auth);

      expect(shipped.status).toBe(200);
      expect(shipped.body).toMatchObject({ id: 42, status: 'shipped' });
      await expectConforms(shipped, 'shipOrder', 'v3');
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ code: 'order_already_shipped', message: 'Order 42 has already shipped', status: 409 });
      await expectConforms(again, 'shipOrder', 'v3');
      expect([cancelled.status, unknown.status]).toEqual([404, 404]);
      await expectConforms(unknown, 'shipOrder', 'v3');
      const { events } = await readEvents(app, s, 2, start, 'v3');
      expect(events.map((e) => `${e.type} ${e.orderId}`)).toEqual(['order.cancelled 44', 'order.shipped 42']);
      expect((await request(app).get('/v3/store/orders/42').set(s.auth)).body).toEqual(shipped.body);
    });

    test('shipping fulfils the order: the reply, the read and the event all say complete: true', async () => {
      const app = await createApp({ store: s.store });
      const start = await cursorAfter(app, s, 3, 'v3');

      const shipped = await request(app).post('/v3/store/orders/42/ship').set(s.auth);

      expect(shipped.body).toMatchObject({ id: 42, status: 'shipped', complete: true });
      expect((await request(app).get('/v3/store/orders/42').set(s.auth)).body).toMatchObject({ complete: true });
      const { events } = await readEvents(app, s, 1, start, 'v3');
      expect(events[0]).toMatchObject({ type: 'order.shipped', order: { id: 42, complete: true } });
    });

    test('a key without orders:ship gets the 403, and ships nothing', async () => {
      const canceller = await addKey(s.store, 'canceller', ['orders:read', 'orders:cancel']);

      const res = await request(await createApp({ store: s.store }))
        .post('/v3/store/orders/42/ship')
        .set({ Authorization: `Bearer ${canceller}` });

      expect(res.status).toBe(403);
      expect(res.headers['www-authenticate']).toContain('scope="orders:ship"');
      expect((await s.store.getOrder(42))?.status).toBe('pending');
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'shipOrder', {}, 'v3');

      expect(res.status).toBe(401);
      await expectConforms(res, 'shipOrder', 'v3');
    });
  });
});
