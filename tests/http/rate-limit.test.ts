import request from 'supertest';
import { createApp } from '../../src/app';
import { DEFAULT_SCOPES, generateKey, hashKey } from '../../src/keys';
import { createMetrics } from '../../src/metrics';
import type { Policy } from '../../src/rate-policy';
import type { Store } from '../../src/store';
import { expectConforms } from '../helpers/contract';
import { eachStore, order, policies } from '../helpers/stores';

const SPENT = { code: 'service_unavailable', message: "The API key's rate limit has been reached", status: 503 };

eachStore((s) => {
  /** A key with these stored policies (null: the deployment's) and scopes. */
  const limitedKey = async (name: string, rateLimit: string | null, scopes?: string[], store: Store = s.store) => {
    const key = generateKey();
    await store.createKey(name, hashKey(key), { policies: policies(rateLimit), scopes: scopes ?? DEFAULT_SCOPES });
    return key;
  };
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeEach(async () => {
    await s.store.importOrders([order({ id: 1 }), order({ id: 2 })]);
  });

  test('a key is admitted up to its quota, then refused with 503 and Retry-After, uncounted, on v1 and v2 alike', async () => {
    const metrics = createMetrics();
    const app = await createApp({ store: s.store, metrics });
    const key = await limitedKey('three', '3/day');

    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await request(app).get('/v2/store/orders').set(bearer(key))).status);
    const refused = await request(app).get('/v2/store/orders').set(bearer(key));
    const refusedV1 = await request(app).get('/v1/store/orders').set(bearer(key));
    const cancel = await request(app).delete('/v1/store/orders/1').set(bearer(key));

    expect(statuses).toEqual([200, 200, 200]);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual(SPENT);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 86_400).toBe(true);
    await expectConforms(refused, 'listOrders', 'v2');
    expect(refusedV1.body).toEqual(SPENT);
    await expectConforms(refusedV1, 'listOrders', 'v1');
    expect(cancel.status).toBe(503);
    await expectConforms(cancel, 'cancelOrder', 'v1');
    expect((await s.store.getOrder(1))?.status).toBe('pending');
    expect(await metrics.registry.metrics()).toContain('petstore_auth_refusals_total{reason="limit"} 3');
    // Other keys keep their own budgets.
    expect((await request(app).get('/v2/store/orders').set(s.auth)).status).toBe(200);
  });

  test('v1 and v2 share one budget per key', async () => {
    const app = await createApp({ store: s.store });
    const key = await limitedKey('shared', '2/day');

    const statuses = [
      (await request(app).get('/v1/store/orders').set(bearer(key))).status,
      (await request(app).get('/v2/store/orders/1').set(bearer(key))).status,
      (await request(app).get('/v1/pets/10').set(bearer(key))).status,
    ];

    expect(statuses).toEqual([200, 200, 503]);
  });

  test('a request refused for its key or its scope is not counted', async () => {
    const app = await createApp({ store: s.store });
    const reader = await limitedKey('reader', '2/day', ['orders:read']);

    for (let i = 0; i < 3; i += 1) expect((await request(app).delete('/v2/store/orders/1').set(bearer(reader))).status).toBe(401);
    const reads = [];
    for (let i = 0; i < 3; i += 1) reads.push((await request(app).get('/v2/store/orders').set(bearer(reader))).status);

    expect(reads).toEqual([200, 200, 503]);
  });

  test("the deployment's policy holds for keys without their own; none exempts a key; a key's own wins", async () => {
    const rateLimit: Policy[] = [{ quota: 1, unit: 'day' }];
    const app = await createApp({ store: s.store, rateLimit });
    const plain = await limitedKey('plain', null);
    const exempt = await limitedKey('exempt', 'none');
    const own = await limitedKey('own', '2/day');
    const send = async (key: string, times: number) => {
      const statuses = [];
      for (let i = 0; i < times; i += 1) statuses.push((await request(app).get('/v2/store/orders').set(bearer(key))).status);
      return statuses;
    };

    expect(await send(plain, 2)).toEqual([200, 503]);
    expect(await send(exempt, 4)).toEqual([200, 200, 200, 200]);
    expect(await send(own, 3)).toEqual([200, 200, 503]);
  });

  test('every policy applies at once, and a changed policy holds from the next request', async () => {
    const app = await createApp({ store: s.store });
    const key = await limitedKey('two', '5/h,2/day');
    const send = async () => (await request(app).get('/v2/store/orders').set(bearer(key))).status;

    expect([await send(), await send(), await send()]).toEqual([200, 200, 503]);
    expect(await s.store.updateKey('two', { policies: 'none' })).toBe(true);
    expect(await send()).toBe(200);
    expect(await s.store.updateKey('two', { policies: policies('3/h') })).toBe(true);
    // Two were counted in this hour: the refused request was not, nor the one without a limit.
    expect([await send(), await send()]).toEqual([200, 503]);
    expect((await s.store.listKeys()).find((info) => info.name === 'two')?.policies).toEqual([{ quota: 3, unit: 'h' }]);
  });

  test("a window ends by the store's clock, and Retry-After says when", async () => {
    const app = await createApp({ store: s.store });
    const key = await limitedKey('fast', '1/s');

    // Two requests in the same second: the second is refused. Keep going until one is (a second
    // may turn between two requests).
    let refused: request.Response | undefined;
    for (let i = 0; i < 20 && refused === undefined; i += 1) {
      const res = await request(app).get('/v2/store/orders').set(bearer(key));
      if (res.status === 503) refused = res;
    }

    expect(refused?.headers['retry-after']).toBe('1');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await request(app).get('/v2/store/orders').set(bearer(key))).status).toBe(200);
  });

  test('two instances on one store admit exactly the quota between them, under concurrent requests', async () => {
    const second = await s.fresh.another();
    try {
      const key = await limitedKey('busy', '15/day');
      const apps = [await createApp({ store: s.store }), await createApp({ store: second })];

      const statuses = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          request(apps[i % 2]!)
            .get('/v2/store/orders/2')
            .set(bearer(key)),
        ),
      );

      const counts = statuses.reduce<Record<number, number>>(
        (tally, res) => ({ ...tally, [res.status]: (tally[res.status] ?? 0) + 1 }),
        {},
      );
      expect(counts).toEqual({ 200: 15, 503: 25 });
    } finally {
      await second.close();
    }
  });
});
