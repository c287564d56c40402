import request from 'supertest';
import { createApp } from '../../../src/app';
import { LOCAL_WEBHOOKS } from '../../../src/config';
import { expectConforms } from '../../helpers/contract';
import { addKey, eachStore, order } from '../../helpers/stores';

// The webhook endpoint operations (3.2): made, read, paged, changed, rotated, removed, their log
// and replay; the address rules over HTTP, on loopback addresses and local names only; the scope.
eachStore((s) => {
  const local = () => createApp({ store: s.store, webhooks: LOCAL_WEBHOOKS });

  test('an endpoint is made with its secret shown once, read and listed without it, changed, rotated, replayed and removed', async () => {
    const app = await local();
    const made = await request(app)
      .post('/v3/webhook-endpoints')
      .set(s.auth)
      .send({ url: 'http://127.0.0.1:9/hooks', events: ['order.created'], description: 'fulfilment' });
    expect(made.status).toBe(201);
    await expectConforms(made, 'createWebhookEndpoint', 'v3');
    const endpoint = made.body as { id: string; secret: string };
    expect(made.headers.location).toBe(`/v3/webhook-endpoints/${endpoint.id}`);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^we_[a-z0-9]{21}$/),
      url: 'http://127.0.0.1:9/hooks',
      events: ['order.created'],
      description: 'fulfilment',
      status: 'enabled',
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });

    const read = await request(app).get(`/v3/webhook-endpoints/${endpoint.id}`).set(s.auth);
    expect(read.status).toBe(200);
    await expectConforms(read, 'getWebhookEndpoint', 'v3');
    const { secret: _secret, ...shown } = made.body as Record<string, unknown>;
    expect(read.body).toEqual(shown);

    const second = await request(app).post('/v3/webhook-endpoints').set(s.auth).send({ url: 'http://[::1]:9/other' });
    expect(second.status).toBe(201);
    const page = await request(app).get('/v3/webhook-endpoints?limit=1').set(s.auth);
    await expectConforms(page, 'listWebhookEndpoints', 'v3');
    expect(page.body).toEqual({ endpoints: [shown], nextCursor: endpoint.id });
    const rest = await request(app).get(`/v3/webhook-endpoints?limit=1&after=${endpoint.id}`).set(s.auth);
    expect(rest.body).toEqual({
      endpoints: [expect.objectContaining({ id: (second.body as { id: string }).id })],
      nextCursor: rest.body.nextCursor,
    });
    expect(JSON.stringify([page.body, rest.body])).not.toContain('whsec_');

    const changed = await request(app)
      .patch(`/v3/webhook-endpoints/${endpoint.id}`)
      .set(s.auth)
      .send({ events: null, description: null, status: 'disabled' });
    expect(changed.status).toBe(200);
    await expectConforms(changed, 'updateWebhookEndpoint', 'v3');
    expect(changed.body).toEqual({
      id: endpoint.id,
      url: 'http://127.0.0.1:9/hooks',
      status: 'disabled',
      disabledReason: 'disabled by hand',
      createdAt: shown.createdAt,
    });
    const enabled = await request(app).patch(`/v3/webhook-endpoints/${endpoint.id}`).set(s.auth).send({ status: 'enabled' });
    expect(enabled.body).toMatchObject({ status: 'enabled' });
    expect(enabled.body).not.toHaveProperty('disabledReason');

    const rotated = await request(app).post(`/v3/webhook-endpoints/${endpoint.id}/rotate-secret`).set(s.auth);
    expect(rotated.status).toBe(200);
    await expectConforms(rotated, 'rotateWebhookEndpointSecret', 'v3');
    expect((rotated.body as { secret: string }).secret).toMatch(/^whsec_/);
    expect((rotated.body as { secret: string }).secret).not.toBe(endpoint.secret);
    expect((await s.store.webhooks.getEndpoint(endpoint.id))?.secrets).toEqual([
      (rotated.body as { secret: string }).secret,
      endpoint.secret,
    ]);

    // Three orders created before the endpoint was made: a replay since before them sends them again.
    const since = new Date(Date.now() - 60_000).toISOString();
    await s.store.importOrders([order({ id: 1 }), order({ id: 2 }), order({ id: 3 })]);
    await s.store.cancelOrder(3);
    await request(app)
      .patch(`/v3/webhook-endpoints/${endpoint.id}`)
      .set(s.auth)
      .send({ events: ['order.created'] });
    const replay = await request(app).post(`/v3/webhook-endpoints/${endpoint.id}/replay`).set(s.auth).send({ since });
    expect(replay.status).toBe(202);
    await expectConforms(replay, 'replayWebhookEvents', 'v3');
    expect(replay.body).toEqual({ events: 3 }); // the three created, not the cancel
    const future = await request(app)
      .post(`/v3/webhook-endpoints/${endpoint.id}/replay`)
      .set(s.auth)
      .send({ since: '2999-01-01T00:00:00z' });
    expect(future.body).toEqual({ events: 0 });

    const log = await request(app).get(`/v3/webhook-endpoints/${endpoint.id}/deliveries`).set(s.auth);
    expect(log.status).toBe(200);
    await expectConforms(log, 'listWebhookDeliveries', 'v3');
    expect(log.body).toEqual({ deliveries: [], nextCursor: null });

    const removed = await request(app).delete(`/v3/webhook-endpoints/${endpoint.id}`).set(s.auth);
    expect(removed.status).toBe(204);
    await expectConforms(removed, 'deleteWebhookEndpoint', 'v3');
    for (const [method, path] of [
      ['get', ''],
      ['delete', ''],
      ['post', '/rotate-secret'],
      ['get', '/deliveries'],
    ] as const) {
      const gone = await request(app)[method](`/v3/webhook-endpoints/${endpoint.id}${path}`).set(s.auth);
      expect({ method, path, status: gone.status, body: gone.body }).toEqual({
        method,
        path,
        status: 404,
        body: { code: 'webhook_endpoint_not_found', message: `Webhook endpoint ${endpoint.id} was not found`, status: 404 },
      });
    }
  });

  test('the delivery log is paged newest first', async () => {
    const app = await local();
    const made = await request(app).post('/v3/webhook-endpoints').set(s.auth).send({ url: 'http://127.0.0.1:9/hooks' });
    const id = (made.body as { id: string }).id;
    for (const attempt of [1, 2, 3]) {
      await s.store.webhooks.logAttempt(id, {
        eventId: 'evt_5',
        attempt,
        at: new Date().toISOString(),
        status: 500,
        error: null,
        durationMs: 3.5,
        outcome: 'retrying',
      });
    }
    const first = await request(app).get(`/v3/webhook-endpoints/${id}/deliveries?limit=2`).set(s.auth);
    await expectConforms(first, 'listWebhookDeliveries', 'v3');
    expect((first.body as { deliveries: Array<{ attempt: number }> }).deliveries.map((each) => each.attempt)).toEqual([3, 2]);
    const next = await request(app)
      .get(`/v3/webhook-endpoints/${id}/deliveries?limit=2&after=${(first.body as { nextCursor: string }).nextCursor}`)
      .set(s.auth);
    expect(next.body).toEqual({
      deliveries: [expect.objectContaining({ attempt: 1, status: 500, outcome: 'retrying' })],
      nextCursor: null,
    });
    const wrong = await request(app).get(`/v3/webhook-endpoints/${id}/deliveries?after=abc`).set(s.auth);
    expect(wrong.status).toBe(400);
    await expectConforms(wrong, 'listWebhookDeliveries', 'v3');
  });

  test('on a server that does not allow them, http and loopback, private and local endpoints are refused with a 400 naming the rule', async () => {
    const app = await createApp({ store: s.store });
    const refused = async (url: string) => {
      const res = await request(app).post('/v3/webhook-endpoints').set(s.auth).send({ url });
      expect(res.status).toBe(400);
      await expectConforms(res, 'createWebhookEndpoint', 'v3');
      return (res.body as { message: string }).message;
    };
    expect(await refused('http://127.0.0.1:9/hooks')).toBe('url must be https (the operator has not allowed http)');
    expect(await refused('https://127.0.0.1:9/hooks')).toMatch(
      /^url: 127\.0\.0\.1 is a loopback address.*private addresses are not allowed/,
    );
    expect(await refused('https://127.1.2.3/hooks')).toContain('loopback');
    expect(await refused('https://[::1]/hooks')).toContain('loopback');
    expect(await refused('https://[::ffff:127.0.0.1]/hooks')).toContain('loopback');
    expect(await refused('https://localhost:8443/hooks')).toContain('local name');
    expect(await refused('https://receiver.localhost/hooks')).toContain('local name');
    expect(await refused('https://user:pw@127.0.0.1/hooks')).toBe('url must not carry a user name or password');
    expect(await s.store.webhooks.listEndpoints('', 10)).toEqual([]);

    // A change of URL is checked as a new one is.
    const made = await request(await local())
      .post('/v3/webhook-endpoints')
      .set(s.auth)
      .send({ url: 'http://127.0.0.1:9/hooks' });
    const moved = await request(app)
      .patch(`/v3/webhook-endpoints/${(made.body as { id: string }).id}`)
      .set(s.auth)
      .send({ url: 'https://10.0.0.1/hooks' });
    expect(moved.status).toBe(400);
    expect((moved.body as { message: string }).message).toContain('private address');
  });

  test('a key without webhooks:manage gets 403 insufficient_scope, and no key a 401', async () => {
    const app = await local();
    const reader = await addKey(s.store, 'reader', ['orders:read']);
    const res = await request(app)
      .post('/v3/webhook-endpoints')
      .set({ Authorization: `Bearer ${reader}` })
      .send({ url: 'http://127.0.0.1:9/hooks' });
    expect(res.status).toBe(403);
    await expectConforms(res, 'createWebhookEndpoint', 'v3');
    expect(res.body).toMatchObject({ code: 'insufficient_scope' });
    expect(res.headers['www-authenticate']).toContain('scope="webhooks:manage"');
    const listed = await request(app)
      .get('/v3/webhook-endpoints')
      .set({ Authorization: `Bearer ${reader}` });
    expect(listed.status).toBe(403);
    const anonymous = await request(app).get('/v3/webhook-endpoints');
    expect(anonymous.status).toBe(401);
    await expectConforms(anonymous, 'listWebhookEndpoints', 'v3');
  });
});
