import request from 'supertest';
import { createApp } from '../../src/app';
import { DEFAULT_SCOPES, generateKey, hashKey } from '../../src/keys';
import { createMetrics } from '../../src/metrics';
import { expectConforms } from '../helpers/contract';
import { eachStore, order, policies } from '../helpers/stores';

// What v3 answers for a key's scope and limit: 403 insufficient_scope, 429 rate_limited, and the
// RateLimit fields of draft-ietf-httpapi-ratelimit-headers on every counted reply, on both stores.
eachStore((s) => {
  const keyWith = async (name: string, options: { rateLimit?: string | null; scopes?: string[] }) => {
    const key = generateKey();
    await s.store.createKey(name, hashKey(key), {
      scopes: options.scopes ?? DEFAULT_SCOPES,
      policies: policies(options.rateLimit ?? null),
    });
    return { Authorization: `Bearer ${key}` };
  };

  beforeEach(() => s.store.importOrders([order({ id: 1 }), order({ id: 2 })]));

  test('a key without the scope gets 403 insufficient_scope with its challenge, and changes nothing', async () => {
    const metrics = createMetrics();
    const app = await createApp({ store: s.store, metrics });
    const reader = await keyWith('reader', { scopes: ['orders:read'] });

    const res = await request(app).delete('/v3/store/orders/1').set(reader);

    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 'insufficient_scope', message: 'The API key lacks the scope orders:cancel', status: 403 });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="petstore-orders", error="insufficient_scope", scope="orders:cancel"');
    await expectConforms(res, 'cancelOrder', 'v3');
    expect((await s.store.getOrder(1))?.status).toBe('pending');
    expect(await metrics.registry.metrics()).toContain('petstore_auth_refusals_total{reason="scope"} 1');
    // The same key on v2 gets the 401 v2 declares, with the same challenge.
    const v2 = await request(app).delete('/v2/store/orders/1').set(reader);
    expect(v2.status).toBe(401);
    expect(v2.headers['www-authenticate']).toBe(res.headers['www-authenticate']);
  });

  test('every counted reply carries RateLimit and RateLimit-Policy; the spent limit is a 429 with Retry-After, uncounted', async () => {
    const metrics = createMetrics();
    const app = await createApp({ store: s.store, metrics });
    const limited = await keyWith('limited', { rateLimit: '3/day,100/h' });

    const ok = await request(app).get('/v3/store/orders/1').set(limited);
    const missing = await request(app).get('/v3/store/orders/9').set(limited);
    const bad = await request(app).get('/v3/store/orders?limit=0').set(limited);
    const refused = await request(app).get('/v3/store/orders').set(limited);
    const refusedAgain = await request(app).get('/v3/store/orders').set(limited);

    expect([ok.status, missing.status, bad.status, refused.status]).toEqual([200, 404, 400, 429]);
    for (const res of [ok, missing, bad, refused]) expect(res.headers['ratelimit-policy']).toBe('"day";q=3;w=86400, "h";q=100;w=3600');
    expect(ok.headers.ratelimit).toMatch(/^"day";r=2;t=\d+$/);
    expect(missing.headers.ratelimit).toMatch(/^"day";r=1;t=\d+$/);
    expect(bad.headers.ratelimit).toMatch(/^"day";r=0;t=\d+$/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter >= 1 && retryAfter <= 86_400).toBe(true);
    expect(refused.headers.ratelimit).toBe(`"day";r=0;t=${retryAfter}`);
    expect(refused.body).toEqual({ code: 'rate_limited', message: "The API key's rate limit has been reached", status: 429 });
    await expectConforms(ok, 'getOrderById', 'v3');
    await expectConforms(missing, 'getOrderById', 'v3');
    await expectConforms(bad, 'listOrders', 'v3');
    await expectConforms(refused, 'listOrders', 'v3');
    expect(refusedAgain.status).toBe(429);
    expect(await metrics.registry.metrics()).toContain('petstore_auth_refusals_total{reason="limit"} 2');
    // The hour's window counted the three admitted requests only: the refused ones were not counted.
    const usage = await s.store.countRequest('limited', { h: 100 });
    expect(usage.windows.h.used).toBe(4);
  });

  test('the budget is one per key across v1, v2 and v3; v1 and v2 carry no RateLimit fields', async () => {
    const app = await createApp({ store: s.store });
    const limited = await keyWith('shared', { rateLimit: '3/min' });

    const v1 = await request(app).get('/v1/store/orders').set(limited);
    const v2 = await request(app).get('/v2/store/orders').set(limited);
    const v3 = await request(app).get('/v3/store/orders').set(limited);
    const spent = await request(app).get('/v2/store/orders').set(limited);

    expect([v1.status, v2.status, v3.status, spent.status]).toEqual([200, 200, 200, 503]);
    expect(v1.headers.ratelimit).toBeUndefined();
    expect(v2.headers.ratelimit).toBeUndefined();
    expect(spent.headers.ratelimit).toBeUndefined();
    expect(v3.headers.ratelimit).toMatch(/^"min";r=0;t=\d+$/);
  });

  test('a key without policies, and a refused key or scope, get no RateLimit fields', async () => {
    const app = await createApp({ store: s.store });
    const limitedReader = await keyWith('limited-reader', { rateLimit: '5/min', scopes: ['orders:read'] });

    const plain = await request(app).get('/v3/store/orders').set(s.auth);
    const forbidden = await request(app).delete('/v3/store/orders/1').set(limitedReader);
    const unknown = await request(app)
      .get('/v3/store/orders')
      .set({ Authorization: `Bearer ${generateKey()}` });

    expect([plain.status, forbidden.status, unknown.status]).toEqual([200, 403, 401]);
    for (const res of [plain, forbidden, unknown]) {
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });

  test('an expired key is a 401 whose message says so', async () => {
    const key = generateKey();
    await s.store.createKey('old', hashKey(key), { scopes: DEFAULT_SCOPES, expiresAt: new Date(Date.now() - 1000).toISOString() });

    const res = await request(await createApp({ store: s.store }))
      .get('/v3/store/orders')
      .set({ Authorization: `Bearer ${key}` });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'unauthorized', message: 'The API key has expired', status: 401 });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="petstore-orders", error="invalid_token"');
    await expectConforms(res, 'listOrders', 'v3');
  });
});
