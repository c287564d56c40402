import request from 'supertest';
import { createApp } from '../../../src/app';
import type { Order } from '../../../src/contract/types';
import { listen } from '../../helpers/app';
import { expectConforms } from '../../helpers/contract';
import { eachStore, order } from '../../helpers/stores';

eachStore((s) => {
  describe('listOrders', () => {
    test('when the store is empty, it returns an empty array', async () => {
      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(200);
      expect(res.text).toBe('[]');
      await expectConforms(res, 'listOrders');
    });

    test('it returns every order with exactly the five spec fields, ordered by id', async () => {
      await s.store.importOrders([
        order({ id: 7, petId: 70, quantity: 2, shipDate: '2026-01-02T03:04:05+02:00', complete: true }),
        order({ id: -3, petId: -9007199254740991, quantity: 9007199254740991 }),
        order({ id: 9007199254740991, status: 'shipped' }),
      ]);

      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      const want: Order[] = [
        { id: -3, petId: -9007199254740991, quantity: 9007199254740991, shipDate: '2026-12-01T10:00:00Z', complete: false },
        { id: 7, petId: 70, quantity: 2, shipDate: '2026-01-02T03:04:05+02:00', complete: true },
        { id: 9007199254740991, petId: 10, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false },
      ];
      expect(res.body).toEqual(want);
      expect(res.text).toContain('"id":9007199254740991');
      await expectConforms(res, 'listOrders');
    });

    test('a cancelled order no longer appears in the list', async () => {
      await s.store.importOrders([order({ id: 1 }), order({ id: 2 })]);
      const app = await createApp({ store: s.store });

      await request(app).delete('/v1/store/orders/1').set(s.auth).expect(204);
      const res = await request(app).get('/v1/store/orders').set(s.auth);

      expect(res.body.map((o: Order) => o.id)).toEqual([2]);
    });

    test('HEAD answers like GET without a body', async () => {
      await s.store.importOrders([order({ id: 1 })]);

      const res = await request(await createApp({ store: s.store }))
        .head('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(200);
      expect(res.text).toBeUndefined();
      expect(res.headers.etag).toMatch(/^W\/"[0-9a-f]+-\d+"$/);
    });
  });

  test('query parameters an operation does not declare are ignored', async () => {
    await s.store.importOrders([order({ id: 1 }), order({ id: 2 })]);
    const app = await createApp({ store: s.store });

    const list = await request(app).get('/v1/store/orders?_=1700000000&a=1&a=2').set(s.auth);
    const cancel = await request(app).delete('/v1/store/orders/1?force=true').set(s.auth);

    expect(list.status).toBe(200);
    expect((list.body as Order[]).map((o) => o.id)).toEqual([1, 2]);
    expect(cancel.status).toBe(204);
  });

  describe('cancelOrder', () => {
    test('when the order is pending, cancel returns 204 with no body and records the cancellation', async () => {
      await s.store.importOrders([order({ id: 5 }), order({ id: 6 })]);

      const res = await request(await createApp({ store: s.store }))
        .delete('/v1/store/orders/5')
        .set(s.auth);

      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      await expectConforms(res, 'cancelOrder');
      const [five, six] = await s.rows();
      expect(five).toMatchObject({ id: 5, status: 'cancelled' });
      expect(Date.parse(five!.cancelled_at!)).not.toBeNaN();
      expect(six).toMatchObject({ id: 6, status: 'pending', cancelled_at: null });
    });

    test('when the order has shipped, cancel returns 409 and leaves it shipped', async () => {
      await s.store.importOrders([order({ id: 5, status: 'shipped' })]);

      const res = await request(await createApp({ store: s.store }))
        .delete('/v1/store/orders/5')
        .set(s.auth);

      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        code: 'order_already_shipped',
        message: 'Order 5 has already shipped and cannot be cancelled',
        status: 409,
      });
      await expectConforms(res, 'cancelOrder');
      expect(await s.rows()).toEqual([expect.objectContaining({ id: 5, status: 'shipped', cancelled_at: null })]);
    });

    test.each([
      ['never existed', 404, false],
      ['was already cancelled', 5, true],
    ])('when the order %s, cancel returns 404', async (_case, id, cancelledFirst) => {
      await s.store.importOrders([order({ id: 5 })]);
      if (cancelledFirst) await s.store.cancelOrder(5);

      const res = await request(await createApp({ store: s.store }))
        .delete(`/v1/store/orders/${id}`)
        .set(s.auth);

      expect(res.status).toBe(404);
      expect(res.body.code).toBe('order_not_found');
      await expectConforms(res, 'cancelOrder');
    });

    test.each([
      ['a word', 'abc'],
      ['an exponent', '1e3'],
      ['a decimal point', '1.0'],
      ['a leading zero', '05'],
      ['a plus sign', '+5'],
      ['negative zero', '-0'],
      ['hex', '0x5'],
      ['an encoded space', '5%20'],
      ['an encoded leading space', '%205'],
      ['one past the safe range', '9007199254740992'],
      ['a value that rounds onto an existing id', '9007199254740993'],
      ['a 401-digit number', '1' + '0'.repeat(400)],
      ['below the safe range', '-9007199254740992'],
      ['an encoded slash', '5%2F6'],
      ['unicode digits', '%D9%A5'],
    ])('when orderId is %s, cancel returns 400 and touches nothing', async (_case, raw) => {
      await s.store.importOrders([order({ id: 5 }), order({ id: 9007199254740991 })]);
      const before = await s.rows();

      const res = await request(await createApp({ store: s.store }))
        .delete(`/v1/store/orders/${raw}`)
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.message).toContain('orderId');
      await expectConforms(res, 'cancelOrder');
      expect(await s.rows()).toEqual(before);
    });

    test.each([
      ['the largest safe id', '9007199254740991', 9007199254740991],
      ['the smallest safe id', '-9007199254740991', -9007199254740991],
      ['zero', '0', 0],
      ['a percent-encoded digit', '%35', 5],
    ])('when orderId is %s, cancel accepts it', async (_case, raw, id) => {
      await s.store.importOrders([order({ id })]);

      const res = await request(await createApp({ store: s.store }))
        .delete(`/v1/store/orders/${raw}`)
        .set(s.auth);

      expect(res.status).toBe(204);
      expect((await s.rows())[0]).toMatchObject({ id, status: 'cancelled' });
    });

    test('when many clients cancel the same order at once, exactly one gets 204 and the rest 404', async () => {
      await s.store.importOrders([order({ id: 1 })]);
      const server = await listen({ store: s.store });

      const statuses = await Promise.all(
        Array.from({ length: 25 }, () =>
          fetch(`${server.url}/v1/store/orders/1`, { method: 'DELETE', headers: s.auth }).then((r) => r.status),
        ),
      );
      await server.close();

      expect(statuses.filter((s) => s === 204)).toHaveLength(1);
      expect(statuses.filter((s) => s === 404)).toHaveLength(24);
      expect(await s.rows()).toEqual([expect.objectContaining({ id: 1, status: 'cancelled' })]);
    });
  });
});
