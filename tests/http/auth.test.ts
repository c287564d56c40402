import request from 'supertest';
import { createApp } from '../../src/app';
import { DEFAULT_SCOPES, generateKey, hashKey } from '../../src/keys';
import { createMetrics } from '../../src/metrics';
import type { OperationId } from '../../src/contract/types';
import { expectConforms } from '../helpers/contract';
import { documentWithNotes } from '../helpers/documents';
import { defineHandler, type HandlerDefinitions } from '../../src/http/define-handler';
import { addKey, eachStore, freshStore, order } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

eachStore((s) => {
  let key: string;
  let revoked: string;

  beforeEach(async () => {
    key = await addKey(s.store, 'live');
    revoked = await addKey(s.store, 'gone');
    await s.store.revokeKey('gone');
    await s.store.importOrders([order({ id: 1, petId: 10 })]);
  });

  const operations: Array<[OperationId, 'get' | 'delete', string]> = [
    ['listOrders', 'get', '/v1/store/orders'],
    ['cancelOrder', 'delete', '/v1/store/orders/1'],
    ['getPetById', 'get', '/v1/pets/10'],
  ];

  const refused: Array<[string, () => string | undefined, string]> = [
    ['there is no Authorization header', () => undefined, 'Bearer realm="petstore-orders"'],
    ['the scheme is Basic', () => `Basic ${Buffer.from('user:pass').toString('base64')}`, 'Bearer realm="petstore-orders"'],
    ['the key is sent without a scheme', () => key, 'Bearer realm="petstore-orders"'],
    ['the bearer token is empty', () => 'Bearer ', 'Bearer realm="petstore-orders"'],
    ['the key is wrong', () => 'Bearer pso_wrong', 'Bearer realm="petstore-orders", error="invalid_token"'],
    ['the key is one character short', () => `Bearer ${key.slice(0, -1)}`, 'Bearer realm="petstore-orders", error="invalid_token"'],
    ['the key was revoked', () => `Bearer ${revoked}`, 'Bearer realm="petstore-orders", error="invalid_token"'],
    ['two tokens are sent', () => `Bearer ${key} ${key}`, 'Bearer realm="petstore-orders"'],
  ];

  describe.each(operations)('%s', (operationId, method, path) => {
    test.each(refused)('when %s, it returns 401 with a Bearer challenge', async (_case, header, challenge) => {
      const app = await createApp({ store: s.store });
      const value = header();
      const req = request(app)[method](path);
      if (value !== undefined) req.set('Authorization', value);

      const res = await req;

      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(challenge);
      expect(res.body).toEqual({ code: 'unauthorized', message: 'A valid API key is required', status: 401 });
      await expectConforms(res, operationId);
    });

    test.each([['Bearer'], ['bearer'], ['BEARER'], ['bEaReR']])('when the scheme is written %s, the key is accepted', async (scheme) => {
      const res = await request(await createApp({ store: s.store }))
        [method](path)
        .set('Authorization', `${scheme} ${key}`);

      expect(res.status).toBeLessThan(300);
    });
  });

  test('a 401 for a revoked key is identical to one for a key that never existed', async () => {
    const app = await createApp({ store: s.store });

    const [gone, unknown] = await Promise.all([
      request(app).get('/v1/store/orders').set('Authorization', `Bearer ${revoked}`),
      request(app).get('/v1/store/orders').set('Authorization', 'Bearer pso_neverissued'),
    ]);

    expect(gone.text).toBe(unknown.text);
    expect(gone.headers['www-authenticate']).toBe(unknown.headers['www-authenticate']);
  });

  describe('a key that expires', () => {
    const challenge = 'Bearer realm="petstore-orders", error="invalid_token"';
    const expired = { code: 'unauthorized', message: 'The API key has expired', status: 401 };

    test.each([
      ['listOrders', '/v1/store/orders'],
      ['listOrders', '/v2/store/orders'],
    ] as const)('is refused once its time has come, saying so (%s, %s)', async (operationId, path) => {
      const expiring = generateKey();
      await s.store.createKey('short-lived', hashKey(expiring), { scopes: DEFAULT_SCOPES, expiresAt: '2020-01-01T00:00:00.000Z' });
      const res = await request(await createApp({ store: s.store }))
        .get(path)
        .set('Authorization', `Bearer ${expiring}`);

      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(challenge);
      expect(res.body).toEqual(expired);
      if (path.startsWith('/v1/')) await expectConforms(res, operationId);
    });

    test('works until its expiry, and an expiry moved or removed holds from the next request', async () => {
      const expiring = generateKey();
      const later = new Date(Date.now() + 3_600_000).toISOString();
      await s.store.createKey('short-lived', hashKey(expiring), { scopes: DEFAULT_SCOPES, expiresAt: later });
      const app = await createApp({ store: s.store });
      const ask = () => request(app).get('/v1/store/orders').set('Authorization', `Bearer ${expiring}`);

      expect((await ask()).status).toBe(200);
      expect(await s.store.updateKey('short-lived', { expiresAt: new Date(Date.now() - 1000).toISOString() })).toBe(true);
      expect((await ask()).body).toEqual(expired);
      expect(await s.store.updateKey('short-lived', { expiresAt: null })).toBe(true);
      expect((await ask()).status).toBe(200);
      expect((await s.store.listKeys()).find((info) => info.name === 'short-lived')?.expiresAt).toBeNull();
    });

    test('an expiry is set only on a key that exists and is not revoked', async () => {
      expect(await s.store.updateKey('nobody', { expiresAt: null })).toBe(false);
      expect(await s.store.updateKey('gone', { expiresAt: null })).toBe(false);
    });

    test('refusals of expired and revoked keys are counted by reason; unknown keys are not', async () => {
      const metrics = createMetrics();
      const expiring = generateKey();
      await s.store.createKey('short-lived', hashKey(expiring), { scopes: DEFAULT_SCOPES, expiresAt: '2020-01-01T00:00:00.000Z' });
      const app = await createApp({ store: s.store, metrics });
      for (const token of [expiring, expiring, revoked, 'pso_neverissued'])
        await request(app).get('/v2/store/orders').set('Authorization', `Bearer ${token}`).expect(401);

      const text = await metrics.registry.metrics();
      expect(text).toContain('petstore_auth_refusals_total{reason="expired"} 2');
      expect(text).toContain('petstore_auth_refusals_total{reason="revoked"} 1');
      expect(text).not.toMatch(/petstore_auth_refusals_total\{reason="(invalid|missing)"\}/);
    });
  });

  describe('a key rotated', () => {
    const ask = async (app: Awaited<ReturnType<typeof createApp>>, token: string) =>
      (await request(app).get('/v2/store/orders').set('Authorization', `Bearer ${token}`)).status;

    test('answers to its new secret, and to the old one until the grace ends, then never again', async () => {
      const metrics = createMetrics();
      const app = await createApp({ store: s.store, metrics });
      const second = generateKey();
      const third = generateKey();

      expect(await s.store.rotateKey('live', hashKey(second), new Date(Date.now() + 3_600_000).toISOString())).toBe(true);
      expect([await ask(app, second), await ask(app, key)]).toEqual([200, 200]);

      // A rotation whose grace has already ended: the secret it replaced fails as a revoked key,
      // and the one replaced before is forgotten.
      expect(await s.store.rotateKey('live', hashKey(third), new Date(Date.now() - 1000).toISOString())).toBe(true);
      expect([await ask(app, third), await ask(app, second), await ask(app, key)]).toEqual([200, 401, 401]);
      const refused = await request(app).get('/v2/store/orders').set('Authorization', `Bearer ${second}`);
      const unknown = await request(app).get('/v2/store/orders').set('Authorization', 'Bearer pso_neverissued');
      expect(refused.text).toBe(unknown.text);
      expect(await metrics.registry.metrics()).toContain('petstore_auth_refusals_total{reason="revoked"} 2');
      // Still one key: a rotation gives a key a new secret, not a new name.
      expect((await s.store.listKeys()).filter((info) => info.name === 'live')).toHaveLength(1);
    });

    test('a rotation undone gives the key its old secret back, and only a known name is rotated', async () => {
      const app = await createApp({ store: s.store });
      const unseen = generateKey();
      await s.store.rotateKey('live', hashKey(unseen), new Date(Date.now() + 3_600_000).toISOString());

      expect(await s.store.undoRotation('live', hashKey(unseen))).toBe(true);
      expect([await ask(app, key), await ask(app, unseen)]).toEqual([200, 401]);
      expect(await s.store.rotateKey('nobody', hashKey(generateKey()), new Date().toISOString())).toBe(false);
      expect(await s.store.rotateKey('gone', hashKey(generateKey()), new Date().toISOString())).toBe(false);
      expect(await ask(app, revoked)).toBe(401);
    });

    test('an expired key stays expired, whichever secret is sent', async () => {
      const app = await createApp({ store: s.store });
      const next = generateKey();
      await s.store.rotateKey('live', hashKey(next), new Date(Date.now() + 3_600_000).toISOString());
      await s.store.updateKey('live', { expiresAt: new Date(Date.now() - 1000).toISOString() });

      for (const token of [key, next]) {
        const res = await request(app).get('/v2/store/orders').set('Authorization', `Bearer ${token}`);
        expect(res.body).toEqual({ code: 'unauthorized', message: 'The API key has expired', status: 401 });
      }
    });
  });

  describe("a key's scopes", () => {
    const challenge = (scope: string) => `Bearer realm="petstore-orders", error="insufficient_scope", scope="${scope}"`;
    const lacks = (scope: string) => ({ code: 'unauthorized', message: `The API key lacks the scope ${scope}`, status: 401 });

    // Every operation of v1 and v2, what it needs, and a request to it.
    const calls: Array<[string, 'v1' | 'v2', 'get' | 'delete', string, string]> = [
      ['listOrders', 'v1', 'get', '/v1/store/orders', 'orders:read'],
      ['getPetById', 'v1', 'get', '/v1/pets/10', 'orders:read'],
      ['cancelOrder', 'v1', 'delete', '/v1/store/orders/1', 'orders:cancel'],
      ['listOrders', 'v2', 'get', '/v2/store/orders', 'orders:read'],
      ['getOrderById', 'v2', 'get', '/v2/store/orders/1', 'orders:read'],
      ['listOrderEvents', 'v2', 'get', '/v2/store/order-events', 'orders:read'],
      ['cancelOrder', 'v2', 'delete', '/v2/store/orders/1', 'orders:cancel'],
    ];

    test.each(calls)(
      'a key without the scope %s (%s) needs gets 401 naming it, and changes nothing',
      async (operationId, version, method, path, scope) => {
        const other = scope === 'orders:read' ? 'orders:cancel' : 'orders:read';
        const limited = await addKey(s.store, 'limited', [other]);
        const metrics = createMetrics();
        const app = await createApp({ store: s.store, metrics });

        const res = await request(app)[method](path).set('Authorization', `Bearer ${limited}`);

        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toBe(challenge(scope));
        expect(res.body).toEqual(lacks(scope));
        await expectConforms(res, operationId, version);
        expect(await metrics.registry.metrics()).toContain('petstore_auth_refusals_total{reason="scope"} 1');
        // The order is still there, pending: a refused cancel changed nothing.
        expect((await s.store.getOrder(1))?.status).toBe('pending');
        // With the scope, the same request succeeds.
        const allowed = await addKey(s.store, 'allowed', [scope]);
        expect((await request(app)[method](path).set('Authorization', `Bearer ${allowed}`)).status).toBeLessThan(300);
      },
    );

    test('the key is checked before the scope: an expired key without the scope is told it expired', async () => {
      const expiring = generateKey();
      await s.store.createKey('short-lived', hashKey(expiring), { expiresAt: '2020-01-01T00:00:00.000Z', scopes: ['orders:read'] });
      const res = await request(await createApp({ store: s.store }))
        .delete('/v1/store/orders/1')
        .set('Authorization', `Bearer ${expiring}`);

      expect(res.body).toEqual({ code: 'unauthorized', message: 'The API key has expired', status: 401 });
    });

    test('the scope is checked before the request: a malformed id from a key without the scope is a 401', async () => {
      const reader = await addKey(s.store, 'reader', ['orders:read']);
      const res = await request(await createApp({ store: s.store }))
        .delete('/v2/store/orders/abc')
        .set('Authorization', `Bearer ${reader}`);

      expect(res.status).toBe(401);
      expect(res.body).toEqual(lacks('orders:cancel'));
    });

    test('a key made without scopes may read and cancel; scopes changed hold from the next request', async () => {
      const plain = generateKey();
      await s.store.createKey('plain', hashKey(plain), { scopes: DEFAULT_SCOPES });
      const app = await createApp({ store: s.store });
      const cancel = () => request(app).delete('/v2/store/orders/1').set('Authorization', `Bearer ${plain}`);
      expect((await s.store.listKeys()).find((info) => info.name === 'plain')?.scopes).toEqual(['orders:read', 'orders:cancel']);

      expect(await s.store.updateKey('plain', { scopes: ['orders:read'] })).toBe(true);
      expect((await cancel()).status).toBe(401);
      await request(app).get('/v2/store/orders/1').set('Authorization', `Bearer ${plain}`).expect(200);

      expect(await s.store.updateKey('plain', { scopes: ['orders:cancel'] })).toBe(true);
      expect((await cancel()).status).toBe(204);
      expect((await request(app).get('/v2/store/orders').set('Authorization', `Bearer ${plain}`)).body).toEqual(lacks('orders:read'));
      // Changing the scopes leaves the expiry as it was, and the reverse.
      expect(await s.store.updateKey('plain', { expiresAt: '2099-01-01T00:00:00.000Z' })).toBe(true);
      expect((await s.store.listKeys()).find((info) => info.name === 'plain')).toMatchObject({
        scopes: ['orders:cancel'],
        expiresAt: '2099-01-01T00:00:00.000Z',
      });
    });
  });

  test('a key revoked while the app runs is refused on the very next request', async () => {
    const app = await createApp({ store: s.store });
    await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`).expect(200);

    await s.store.revokeKey('live');
    const res = await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);

    expect(res.status).toBe(401);
  });

  test('the key is checked before the order id, so a bad id without a key is a 401', async () => {
    const res = await request(await createApp({ store: s.store })).delete('/v1/store/orders/abc');

    expect(res.status).toBe(401);
  });

  describe("an operation's security requirements, as the document states them", () => {
    /** createNote answering who called it, so a test sees whether it ran and with which key. */
    const notes = {
      createNote: defineHandler(
        'v1',
        'createNote' as 'listOrders',
        () =>
          (async (context: unknown) => ({
            status: 201,
            body: { text: (context as { keyName?: string }).keyName ?? 'nobody' },
          })) as never,
      ),
    } as unknown as Partial<HandlerDefinitions>;
    const post = async (security: Array<Record<string, string[]>>, authorization?: string) => {
      const app = await createApp({
        store: s.store,
        document: documentWithNotes((operation) => (operation.security = security)),
        modules: notes,
      });
      const req = request(app).post('/v1/notes').send({ text: 'x' });
      if (authorization !== undefined) req.set('Authorization', authorization);
      return req;
    };

    test('the server does not start with a secured operation that declares no scopes; an open one needs none', async () => {
      const unscoped = (security?: Array<Record<string, string[]>>) =>
        documentWithNotes((operation) => {
          delete (operation as { 'x-scopes'?: unknown })['x-scopes'];
          if (security !== undefined) operation.security = security;
        });

      await expect(createApp({ store: s.store, document: unscoped(), modules: notes })).rejects.toThrow(
        "the v1 document cannot be served: createNote requires a key but declares no scopes: add 'x-scopes'",
      );
      const open = await createApp({ store: s.store, document: unscoped([{ bearerAuth: [] }, {}]), modules: notes });
      expect((await request(open).post('/v1/notes').send({ text: 'x' })).status).toBe(201);
    });

    test('a key that lacks the scope of an operation whose key is optional is not refused', async () => {
      const reader = await addKey(s.store, 'reader', ['orders:cancel']);
      const res = await post([{ bearerAuth: [] }, {}], `Bearer ${reader}`);

      expect(res.status).toBe(201);
      expect(res.body).toEqual({ text: 'reader' });
    });

    test('an operation with no requirement (security: []) answers without a key', async () => {
      const res = await post([]);

      expect(res.status).toBe(201);
      expect(res.body).toEqual({ text: 'nobody' });
    });

    test('an empty requirement among others makes the key optional, and a given key is still named', async () => {
      expect((await post([{ bearerAuth: [] }, {}])).body).toEqual({ text: 'nobody' });
      expect((await post([{ bearerAuth: [] }, {}], `Bearer ${key}`)).body).toEqual({ text: 'live' });
    });

    test.each([['partnerKey'], ['constructor'], ['toString']])(
      'a requirement naming a scheme nobody checks (%s) is never met, even beside a valid key',
      async (scheme) => {
        const res = await post([{ bearerAuth: [], [scheme]: [] }], `Bearer ${key}`);

        expect(res.status).toBe(401);
        expect(res.body).toEqual({ code: 'unauthorized', message: 'A valid API key is required', status: 401 });
        expect((await post([{ [scheme]: [] }])).status).toBe(401);
      },
    );
  });
});

// SQLite answers the key check in-process, at once (not as a promise); a check it cannot make is
// the store's failure, never a refused key and never a pass.
describe('a key check the SQLite store cannot make', () => {
  test('is a 503 Error, not a 401', async () => {
    const tmp = tempDir();
    const { store } = freshStore(tmp.dir);
    try {
      const key = await addKey(store);
      await store.importOrders([order({ id: 1 })]);
      const app = await createApp({ store });
      expect((await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`)).status).toBe(200);
      await store.close();

      const res = await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);

      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: 'service_unavailable', message: 'The order store is unavailable', status: 503 });
      await expectConforms(res, 'listOrders');
    } finally {
      tmp.cleanup();
    }
  });
});
