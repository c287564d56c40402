import request from 'supertest';
import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { eachStore, order } from '../../helpers/stores';

// listOrders (GET /v3/store/orders) on both stores. It shares v2's pages (src/orders/page.ts), whose
// every rule tests/handlers/v2/list-orders.test.ts covers; here, what v3 answers with them.
eachStore((s) => {
  describe('listOrders', () => {
    beforeEach(() => s.store.importOrders([1, 2, 3].map((id) => order({ id, status: id === 2 ? 'shipped' : 'pending' }))));

    test('a request built from the document gets a success reply the contract allows', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'listOrders', s.auth, 'v3');

      expect(res.status).toBe(200);
      await expectConforms(res, 'listOrders', 'v3');
    });

    test("pages walk every order once, and the next page's Link is under /v3", async () => {
      const app = await createApp({ store: s.store });

      const first = await request(app).get('/v3/store/orders?limit=2').set(s.auth);
      const second = await request(app)
        .get(`/v3/store/orders?limit=2&cursor=${first.body.nextCursor as string}`)
        .set(s.auth);

      expect(first.body.orders.map((o: { id: number }) => o.id)).toEqual([1, 2]);
      expect(first.headers.link).toBe(`</v3/store/orders?limit=2&cursor=${first.body.nextCursor as string}>; rel="next"`);
      await expectConforms(first, 'listOrders', 'v3');
      expect(second.body).toEqual({ orders: [expect.objectContaining({ id: 3 })], nextCursor: null });
      expect(second.headers.link).toBeUndefined();
    });

    test('an undeclared query parameter is a 400 naming it', async () => {
      const res = await request(await createApp({ store: s.store }))
        .get('/v3/store/orders?colour=red')
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body.message).toContain('colour');
      await expectConforms(res, 'listOrders', 'v3');
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'listOrders', {}, 'v3');

      expect(res.status).toBe(401);
      await expectConforms(res, 'listOrders', 'v3');
    });
  });
});
