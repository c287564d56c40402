import request from 'supertest';
import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { eachStore, order } from '../../helpers/stores';

// getOrderById (GET /v3/store/orders/{orderId}) on both stores. It shares v2's reading (src/orders/read.ts),
// whose every rule tests/handlers/v2/get-order-by-id.test.ts covers; here, what v3 answers with it.
eachStore((s) => {
  describe('getOrderById', () => {
    beforeEach(() => s.store.importOrders([order({ id: 42, petId: 101 }), order({ id: 43, status: 'shipped', complete: true })]));

    test('a request built from the document gets a success reply the contract allows', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'getOrderById', s.auth, 'v3');

      expect(res.status).toBe(200);
      await expectConforms(res, 'getOrderById', 'v3');
    });

    test("the order and its tag are v2's: a tag from either version is a 304 in the other", async () => {
      const app = await createApp({ store: s.store });

      const v3 = await request(app).get('/v3/store/orders/43').set(s.auth);
      const v2 = await request(app).get('/v2/store/orders/43').set(s.auth);
      const again = await request(app)
        .get('/v3/store/orders/43')
        .set(s.auth)
        .set('If-None-Match', v2.headers.etag as string);

      expect(v3.status).toBe(200);
      expect(v3.body).toEqual(v2.body);
      expect(v3.headers.etag).toBe(v2.headers.etag);
      expect(again.status).toBe(304);
      await expectConforms(again, 'getOrderById', 'v3');
    });

    test('an unknown order is a 404 Error', async () => {
      const res = await request(await createApp({ store: s.store }))
        .get('/v3/store/orders/7')
        .set(s.auth);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'order_not_found', message: 'Order 7 was not found', status: 404 });
      await expectConforms(res, 'getOrderById', 'v3');
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'getOrderById', {}, 'v3');

      expect(res.status).toBe(401);
      await expectConforms(res, 'getOrderById', 'v3');
    });
  });
});
