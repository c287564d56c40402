import request from 'supertest';
import { createApp } from '../../src/app';
import { expectConforms } from '../helpers/contract';
import { eachStore, order } from '../helpers/stores';

// Browsers: the origins an operator allows (PETSTORE_CORS_ORIGINS) get CORS headers and preflights; no other does.
eachStore((s) => {
  const ALLOWED = 'https://dashboard.example.com';
  beforeEach(() => s.store.importOrders([order({ id: 1 })]));

  test("an allowed origin's request gets Access-Control-Allow-Origin, Vary and the headers it may read", async () => {
    const app = await createApp({ store: s.store, corsOrigins: [ALLOWED] });

    const res = await request(app).get('/v3/store/orders/1').set(s.auth).set('Origin', ALLOWED);

    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers.vary).toContain('Origin');
    expect(res.headers['access-control-expose-headers']).toContain('RateLimit');
    expect(res.headers['x-request-id']).toBeDefined();
    await expectConforms(res, 'getOrderById', 'v3');
  });

  test('its preflight is answered with 204, the methods, the headers and a max age', async () => {
    const app = await createApp({ store: s.store, corsOrigins: [ALLOWED, 'http://localhost:3000'] });

    const res = await request(app)
      .options('/v3/store/orders/1')
      .set('Origin', ALLOWED)
      .set('Access-Control-Request-Method', 'DELETE')
      .set('Access-Control-Request-Headers', 'authorization');

    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-allow-methods']).toBe('GET,HEAD,POST,DELETE');
    expect(res.headers['access-control-allow-headers']).toContain('Authorization');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['x-request-id']).toBeDefined();
    expect((await s.store.getOrder(1))?.status).toBe('pending');
  });

  test('another origin, or a deployment that allows none, gets no CORS header; its OPTIONS is the 405 the contract says', async () => {
    const listed = await createApp({ store: s.store, corsOrigins: [ALLOWED] });
    const none = await createApp({ store: s.store });

    const other = await request(listed).get('/v3/store/orders/1').set(s.auth).set('Origin', 'https://evil.example.com');
    const preflight = await request(listed)
      .options('/v3/store/orders/1')
      .set('Origin', 'https://evil.example.com')
      .set('Access-Control-Request-Method', 'DELETE');
    const unset = await request(none).get('/v3/store/orders/1').set(s.auth).set('Origin', ALLOWED);

    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.status).toBe(405);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(unset.headers['access-control-allow-origin']).toBeUndefined();
    expect(unset.headers.vary).toBeUndefined();
  });
});
