import { hash } from 'node:crypto';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { eachStore, order } from '../../helpers/stores';

// getOrderById (GET /v2/store/orders/{orderId}) on both stores.
eachStore((s) => {
  describe('getOrderById', () => {
    const seed = () =>
      s.store.importOrders([
        order({ id: 42, petId: 101, shipDate: '2026-12-01T09:30:00+01:00' }),
        order({ id: 43, status: 'shipped', complete: true }),
        order({ id: 44 }),
      ]);

    test('a request built from the document gets a success reply the contract allows', async () => {
      await seed();

      const res = await sendExample(await createApp({ store: s.store }), 'getOrderById', s.auth, 'v2');

      expect(res.status).toBe(200);
      await expectConforms(res, 'getOrderById', 'v2');
    });

    test('the order as it is, status included, with a weak ETag', async () => {
      await seed();
      const app = await createApp({ store: s.store });

      const pending = await request(app).get('/v2/store/orders/42').set(s.auth);
      const shipped = await request(app).get('/v2/store/orders/43').set(s.auth);

      expect(pending.status).toBe(200);
      expect(pending.body).toEqual({
        id: 42,
        petId: 101,
        quantity: 1,
        shipDate: '2026-12-01T09:30:00+01:00',
        complete: false,
        status: 'pending',
      });
      expect(pending.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
      // The tag is the SHA-256 of the body's very bytes, cut to 22 characters of base64url.
      expect(pending.headers.etag).toBe(`W/"${hash('sha256', pending.text, 'base64url').slice(0, 22)}"`);
      expect(shipped.headers.etag).toBe(`W/"${hash('sha256', shipped.text, 'base64url').slice(0, 22)}"`);
      expect(shipped.body).toMatchObject({ id: 43, status: 'shipped', complete: true });
      expect(shipped.headers.etag).not.toBe(pending.headers.etag);
      await expectConforms(pending, 'getOrderById', 'v2');
    });

    test('If-None-Match with the current tag is a 304 with no body; once the order ships, a 200 with a new tag', async () => {
      await seed();
      const app = await createApp({ store: s.store });
      const first = await request(app).get('/v2/store/orders/42').set(s.auth);
      const etag = first.headers.etag as string;

      for (const sent of [etag, etag.slice(2), `W/"other", ${etag}`, '*']) {
        const again = await request(app).get('/v2/store/orders/42').set(s.auth).set('If-None-Match', sent);
        expect(again.status).toBe(304);
        expect(again.text ?? '').toBe('');
        expect(again.headers.etag).toBe(etag);
        await expectConforms(again, 'getOrderById', 'v2');
      }

      await s.store.shipOrder(42);
      const changed = await request(app).get('/v2/store/orders/42').set(s.auth).set('If-None-Match', etag);

      expect(changed.status).toBe(200);
      expect(changed.body.status).toBe('shipped');
      expect(changed.headers.etag).not.toBe(etag);
    });

    test('an unknown order and a cancelled one are a 404 order_not_found', async () => {
      await seed();
      const app = await createApp({ store: s.store });
      expect((await request(app).delete('/v2/store/orders/44').set(s.auth)).status).toBe(204);

      for (const id of [44, 7, -7]) {
        const res = await request(app).get(`/v2/store/orders/${id}`).set(s.auth);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ code: 'order_not_found', message: `Order ${id} was not found`, status: 404 });
        await expectConforms(res, 'getOrderById', 'v2');
      }
    });

    test.each(['042', '+42', '4.2e1', '0x2a', '9007199254740992', '-9007199254740992', 'abc'])(
      'an id that is not a plain safe integer (%s) is a 400 naming it',
      async (id) => {
        const res = await request(await createApp({ store: s.store }))
          .get(`/v2/store/orders/${encodeURIComponent(id)}`)
          .set(s.auth);

        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', status: 400 });
        expect(res.body.message).toContain('orderId');
        await expectConforms(res, 'getOrderById', 'v2');
      },
    );

    test('an undeclared query parameter is a 400, as everywhere in v2', async () => {
      await seed();

      const res = await request(await createApp({ store: s.store }))
        .get('/v2/store/orders/42?fields=id')
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body.message).toContain('fields is not a query parameter of this operation');
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'getOrderById', {}, 'v2');

      expect(res.status).toBe(401);
      await expectConforms(res, 'getOrderById', 'v2');
    });

    test('v1 has no such read: GET on an order is a 405 there, as released', async () => {
      await seed();

      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders/42')
        .set(s.auth);

      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('DELETE');
    });
  });
});
