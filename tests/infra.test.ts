import fs from 'node:fs';
import request from 'supertest';
import { parse } from 'yaml';
import express from 'express';
import { createApp } from '../src/app';
import { SPEC_PATH, cloneDocument, loadDocument } from '../src/contract/document';
import { createHttpServer } from '../src/server';
import type { Store } from '../src/store';
import { storeKinds } from './helpers/stores';
import { addKey, order } from './helpers/store';

describe.each(storeKinds())('$name store', (kind) => {
  beforeAll(() => kind.setUp());
  afterAll(() => kind.tearDown());

  let store: Store;
  beforeEach(async () => ({ store } = await kind.open()));
  afterEach(() => store.close());

  describe('GET /v1/openapi.json', () => {
    test('serves the document exactly as written, with its $refs intact, without a key', async () => {
      const app = await createApp({ store });

      const res = await request(app).get('/v1/openapi.json');

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual(parse(fs.readFileSync(SPEC_PATH, 'utf8')));
      expect(res.text).toContain('"$ref":"#/components/schemas/Order"');
      expect(res.body.info.version).toBe('1.0.0');
    });

    test('keeps serving the original after requests have been routed and validated', async () => {
      const app = await createApp({ store });
      const key = await addKey(store);
      await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`).expect(200);

      const res = await request(app).get('/v1/openapi.json');

      expect(res.body).toEqual(parse(fs.readFileSync(SPEC_PATH, 'utf8')));
    });
  });

  describe('health endpoints', () => {
    test('/healthz answers 200 without a key', async () => {
      const res = await request(await createApp({ store })).get('/healthz');

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    test('/readyz answers 200 while the store is reachable', async () => {
      const res = await request(await createApp({ store })).get('/readyz');

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready' });
    });

    test('/readyz answers a 503 Error once the store is gone, while /healthz stays 200', async () => {
      const app = await createApp({ store });
      await store.close();

      const ready = await request(app).get('/readyz');
      const health = await request(app).get('/healthz');

      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ code: 'service_unavailable', message: 'The order store is unavailable', status: 503 });
      expect(health.status).toBe(200);
    });
  });

  describe('deprecation headers', () => {
    test.each([
      ['a 200', '/v1/pets/10', true, 200],
      ['a 404', '/v1/pets/11', true, 404],
      ['a 400', '/v1/pets/1e1', true, 400],
      ['a 401', '/v1/pets/10', false, 401],
    ])('getPetById carries Deprecation, Sunset and Link on %s', async (_case, path, withKey, status) => {
      await store.importOrders([order({ id: 1, petId: 10 })]);
      const key = await addKey(store);
      const req = request(await createApp({ store })).get(path);
      if (withKey) req.set('Authorization', `Bearer ${key}`);

      const res = await req;

      expect(res.status).toBe(status);
      expect(res.headers.deprecation).toBe(`@${Date.parse('2026-11-01T00:00:00Z') / 1000}`);
      expect(res.headers.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
      expect(res.headers.link).toBe('</changelog>; rel="deprecation", </changelog>; rel="sunset"');
    });

    test('operations that are not deprecated carry no deprecation headers', async () => {
      const key = await addKey(store);

      const res = await request(await createApp({ store }))
        .get('/v1/store/orders')
        .set('Authorization', `Bearer ${key}`);

      expect(res.headers.deprecation).toBeUndefined();
      expect(res.headers.sunset).toBeUndefined();
    });

    test('the headers follow the document: deprecating listOrders there adds them to listOrders', async () => {
      const document = cloneDocument(loadDocument());
      Object.assign(document.paths['/store/orders']!.get!, { deprecated: true, 'x-deprecated-at': '2030-01-01T00:00:00Z' });
      const key = await addKey(store);

      const res = await request(await createApp({ store, document }))
        .get('/v1/store/orders')
        .set('Authorization', `Bearer ${key}`);

      expect(res.headers.deprecation).toBe(`@${Date.parse('2030-01-01T00:00:00Z') / 1000}`);
      expect(res.headers.sunset).toBeUndefined();
    });

    test('a deprecated operation without a deprecation date stops the app from starting', async () => {
      const document = cloneDocument(loadDocument());
      Object.assign(document.paths['/store/orders']!.get!, { deprecated: true });

      await expect(createApp({ store, document })).rejects.toThrow('operation listOrders is deprecated but has no x-deprecated-at date');
    });

    test('the changelog the Link points to is served', async () => {
      const res = await request(await createApp({ store })).get('/changelog');

      expect(res.status).toBe(200);
      expect(res.text).toContain('getPetById');
    });
  });

  describe('getPetById', () => {
    test('finds a pet only through an order that has not been cancelled', async () => {
      await store.importOrders([order({ id: 1, petId: 10 }), order({ id: 2, petId: 20 })]);
      await store.cancelOrder(2);
      const key = await addKey(store);
      const app = await createApp({ store });

      const found = await request(app).get('/v1/pets/10').set('Authorization', `Bearer ${key}`);
      const gone = await request(app).get('/v1/pets/20').set('Authorization', `Bearer ${key}`);

      expect(found.status).toBe(200);
      expect(found.body).toEqual({ id: 10 });
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ code: 'pet_not_found', message: 'Pet 20 was not found', status: 404 });
    });
  });

  describe('startup', () => {
    test('an operation in the spec without a handler stops the app from starting, naming it', async () => {
      const document = cloneDocument(loadDocument());
      document.paths['/store/inventory'] = {
        get: { operationId: 'getInventory', responses: { '200': { description: 'ok' } } },
      };

      await expect(createApp({ store, document })).rejects.toThrow('the spec has operations with no handler: getInventory');
    });
  });

  describe('createHttpServer', () => {
    test('builds requests and responses on the app prototypes, so express has nothing to swap', async () => {
      const app = express();
      const seen: boolean[] = [];
      app.use((req, res) => {
        res.json({ path: req.path, host: req.get('host') });
      });
      const server = createHttpServer(app);
      // Looks before express does: its own Object.setPrototypeOf would make any later look pass.
      server.prependListener('request', (req, res) => {
        seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
      });

      const res = await request(server).get('/a/b?c=d');

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ path: '/a/b', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
      expect(seen).toEqual([true, true]);
    });
  });
});
