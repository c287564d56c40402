import request from 'supertest';
import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { eachStore, order } from '../../helpers/stores';

// cancelOrder (DELETE /v3/store/orders/{orderId}) on both stores: the cancel of every version (src/orders/cancel.ts).
eachStore((s) => {
  describe('cancelOrder', () => {
    beforeEach(() => s.store.importOrders([order({ id: 42 }), order({ id: 43, status: 'shipped', complete: true })]));

    test('a request built from the document gets a success reply the contract allows', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'cancelOrder', s.auth, 'v3');

      expect(res.status).toBe(204);
      await expectConforms(res, 'cancelOrder', 'v3');
    });

    test('a pending order cancelled through v3 is gone from v1 and v2; a shipped one is a 409; a gone one a 404', async () => {
      const app = await createApp({ store: s.store });

      const cancelled = await request(app).delete('/v3/store/orders/42').set(s.auth);
      const shipped = await request(app).delete('/v3/store/orders/43').set(s.auth);
      const again = await request(app).delete('/v3/store/orders/42').set(s.auth);

      expect(cancelled.status).toBe(204);
      expect((await request(app).get('/v2/store/orders/42').set(s.auth)).status).toBe(404);
      expect((await request(app).get('/v1/store/orders').set(s.auth)).body).toEqual([expect.objectContaining({ id: 43 })]);
      expect(shipped.status).toBe(409);
      expect(shipped.body).toEqual({
        code: 'order_already_shipped',
        message: 'Order 43 has already shipped and cannot be cancelled',
        status: 409,
      });
      await expectConforms(shipped, 'cancelOrder', 'v3');
      expect(again.status).toBe(404);
      await expectConforms(again, 'cancelOrder', 'v3');
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'cancelOrder', {}, 'v3');

      expect(res.status).toBe(401);
      await expectConforms(res, 'cancelOrder', 'v3');
    });
  });
});
