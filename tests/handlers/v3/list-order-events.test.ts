import request from 'supertest';
import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { cursorAfter, readEvents } from '../../helpers/feed';
import { eachStore, order } from '../../helpers/stores';

// listOrderEvents (GET /v3/store/order-events) on both stores. It shares v2's feed (src/orders/events.ts),
// whose every rule tests/handlers/v2/list-order-events.test.ts covers; here, what v3 answers with it.
eachStore((s) => {
  describe('listOrderEvents', () => {
    test('a request built from the document gets a success reply the contract allows', async () => {
      await s.store.importOrders([order({ id: 1 })]);

      const res = await sendExample(await createApp({ store: s.store }), 'listOrderEvents', s.auth, 'v3');

      expect(res.status).toBe(200);
      await expectConforms(res, 'listOrderEvents', 'v3');
    });

    test('a change made through v3 is in the feed of v2 and v3 alike, once, and cursors are shared', async () => {
      await s.store.importOrders([order({ id: 1 })]);
      const app = await createApp({ store: s.store });
      const start = await cursorAfter(app, s, 1, 'v3');

      expect((await request(app).delete('/v3/store/orders/1').set(s.auth)).status).toBe(204);
      const v3 = await readEvents(app, s, 1, start, 'v3');
      const v2 = await readEvents(app, s, 1, start, 'v2');

      expect(v3.events).toEqual([{ type: 'order.cancelled', orderId: 1, occurredAt: expect.any(String) }]);
      expect(v2).toEqual(v3);
    });

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), 'listOrderEvents', {}, 'v3');

      expect(res.status).toBe(401);
      await expectConforms(res, 'listOrderEvents', 'v3');
    });
  });
});
