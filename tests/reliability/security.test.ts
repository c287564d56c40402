import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import type { Store } from '../../src/store';
import { cli } from '../helpers/cli';
import { freshStorePerTest, order, withOverrides } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// The checks SECURITY.md promises, each against the real app and a real SQLite file.
const tmp = tempDir();
afterAll(tmp.cleanup);

let store: Store;
let key: string;
freshStorePerTest(tmp.dir, [order({ id: 1 }), order({ id: 2, status: 'shipped' }), order({ id: 3 })], (made) => ({ store, key } = made));

/** Every kind of answer the service gives, authenticated or not, each named by its request. */
async function everyKindOfResponse(app: Parameters<typeof request>[0], withKey: string): Promise<Array<[string, request.Response]>> {
  const auth = { Authorization: `Bearer ${withKey}` };
  const list = await request(app).get('/v1/store/orders').set(auth);
  const named = async (name: string, res: Promise<request.Response>): Promise<[string, request.Response]> => [name, await res];
  return [
    ['GET /v1/store/orders', list],
    await named(
      'GET /v1/store/orders (304)',
      request(app)
        .get('/v1/store/orders')
        .set(auth)
        .set('If-None-Match', list.headers.etag as string),
    ),
    await named('DELETE /v1/store/orders/1', request(app).delete('/v1/store/orders/1').set(auth)),
    await named('DELETE /v1/store/orders/2', request(app).delete('/v1/store/orders/2').set(auth)),
    await named('DELETE /v1/store/orders/99', request(app).delete('/v1/store/orders/99').set(auth)),
    await named('DELETE /v1/store/orders/abc', request(app).delete('/v1/store/orders/abc').set(auth)),
    await named('GET /v1/pet/10', request(app).get('/v1/pet/10').set(auth)),
    await named('GET /v1/store/orders (no key)', request(app).get('/v1/store/orders')),
    await named('GET /v1/store/orders (bad key)', request(app).get('/v1/store/orders').set('Authorization', 'Bearer pso_wrong')),
    await named('PUT /v1/store/orders/1', request(app).put('/v1/store/orders/1').set(auth)),
    await named('GET /v1/nowhere', request(app).get('/v1/nowhere').set(auth)),
    await named('DELETE /v1/store/orders/3 (large body)', request(app).delete('/v1/store/orders/3').set(auth).send('x'.repeat(20_000))),
    await named('GET /healthz', request(app).get('/healthz')),
    await named('GET /readyz', request(app).get('/readyz')),
    await named('GET /v1/openapi.json', request(app).get('/v1/openapi.json')),
    await named('GET /changelog', request(app).get('/changelog')),
    await named('HEAD /v1/store/orders', request(app).head('/v1/store/orders').set(auth)),
    await named('GET /v1/store/orders/%zz', request(app).get('/v1/store/orders/%zz').set(auth)),
    await named('POST /healthz', request(app).post('/healthz')),
    await named('GET /metrics', request(app).get('/metrics')),
    await named('GET /docs', request(app).get('/docs')),
  ];
}

test('every response carries X-Content-Type-Options: nosniff', async () => {
  const responses = await everyKindOfResponse(await createApp({ store }), key);

  expect(new Set(responses.map(([, res]) => res.status))).toEqual(new Set([200, 304, 204, 409, 404, 400, 401, 405, 413]));
  for (const [name, res] of responses) expect([name, res.headers['x-content-type-options']]).toEqual([name, 'nosniff']);
});

test('every response carries one X-Request-Id, whoever wrote its head', async () => {
  const responses = await everyKindOfResponse(await createApp({ store }), key);

  for (const [name, res] of responses)
    expect([name, res.headers['x-request-id']]).toEqual([name, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
});

test('every response to an API request, authenticated or refused, carries Cache-Control: no-store', async () => {
  const responses = await everyKindOfResponse(await createApp({ store }), key);

  const api = responses.filter(([name]) => / \/v1\/(store|pet|nowhere)/.test(name));
  expect(api).toHaveLength(14);
  for (const [name, res] of api) expect([name, res.headers['cache-control']]).toEqual([name, 'no-store']);
});

test('neither a key nor an Authorization header ever reaches the log, even for failures', async () => {
  let logged = '';
  const sink = new Writable({ write: (chunk, _encoding, done) => ((logged += chunk.toString()), done()) });
  const logger = createLogger('trace', sink);
  const failing = withOverrides(store, {
    cancelOrder: () => Promise.reject(new Error('disk on fire')),
  });

  await everyKindOfResponse(await createApp({ store: failing, logger }), key);
  await everyKindOfResponse(await createApp({ store, logger }), key);

  expect(logged).toContain('disk on fire'); // the failure itself is logged
  expect(logged).not.toContain(key);
  expect(logged).not.toContain(key.slice(4, 20));
  expect(logged).not.toContain('pso_wrong');
  expect(logged.toLowerCase()).not.toContain('authorization');
  expect(logged).not.toContain('Bearer');
});

test('the database holds only a hash of a key created by the CLI, never the key', async () => {
  const db = path.join(tmp.dir, 'keys.db');

  const created = cli(['--db', db, 'keys', 'create', '--name', 'ops']);
  const listed = cli(['--db', db, 'keys', 'list']);

  expect(created.status).toBe(0);
  const issued = created.stdout.trim();
  expect(issued).toMatch(/^pso_[A-Za-z0-9_-]{43,}$/);
  expect(listed.stdout).not.toContain(issued);
  const bytes = Buffer.concat(
    ['', '-wal'].filter((suffix) => fs.existsSync(db + suffix)).map((suffix) => fs.readFileSync(db + suffix)),
  ).toString('latin1');
  expect(bytes).toContain('ops');
  expect(bytes).not.toContain(issued);
  expect(bytes).not.toContain(issued.slice(4, 24));
});
