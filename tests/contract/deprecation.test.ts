import request from 'supertest';
import { createApp } from '../../src/app';
import { cloneDocument, loadDocument } from '../../src/contract/document';
import { addKey, eachStore, order } from '../helpers/stores';

// Deprecation comes from the document: every response of a deprecated operation says so.
eachStore((s) => {
  describe('deprecation headers', () => {
    test.each([
      ['a 200', '/v1/pets/10', true, 200],
      ['a 404', '/v1/pets/11', true, 404],
      ['a 400', '/v1/pets/1e1', true, 400],
      ['a 401', '/v1/pets/10', false, 401],
    ])('getPetById carries Deprecation, Sunset and Link on %s', async (_case, path, withKey, status) => {
      await s.store.importOrders([order({ id: 1, petId: 10 })]);
      const key = await addKey(s.store);
      const req = request(await createApp({ store: s.store })).get(path);
      if (withKey) req.set('Authorization', `Bearer ${key}`);

      const res = await req;

      expect(res.status).toBe(status);
      expect(res.headers.deprecation).toBe(`@${Date.parse('2026-11-01T00:00:00Z') / 1000}`);
      expect(res.headers.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
      expect(res.headers.link).toBe('</changelog>; rel="deprecation", </changelog>; rel="sunset"');
    });

    test('operations that are not deprecated carry no deprecation headers', async () => {
      const key = await addKey(s.store);

      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders')
        .set('Authorization', `Bearer ${key}`);

      expect(res.headers.deprecation).toBeUndefined();
      expect(res.headers.sunset).toBeUndefined();
    });

    test('the headers follow the document: deprecating listOrders there adds them to listOrders', async () => {
      const document = cloneDocument(loadDocument());
      Object.assign(document.paths['/store/orders']!.get!, { deprecated: true, 'x-deprecated-at': '2030-01-01T00:00:00Z' });
      const key = await addKey(s.store);

      const res = await request(await createApp({ store: s.store, document }))
        .get('/v1/store/orders')
        .set('Authorization', `Bearer ${key}`);

      expect(res.headers.deprecation).toBe(`@${Date.parse('2030-01-01T00:00:00Z') / 1000}`);
      expect(res.headers.sunset).toBeUndefined();
    });

    test('a deprecated operation without a deprecation date stops the app from starting', async () => {
      const document = cloneDocument(loadDocument());
      Object.assign(document.paths['/store/orders']!.get!, { deprecated: true });

      await expect(createApp({ store: s.store, document })).rejects.toThrow(
        'operation listOrders is deprecated but has no x-deprecated-at date',
      );
    });

    test('the changelog the Link points to is served', async () => {
      const res = await request(await createApp({ store: s.store })).get('/changelog');

      expect(res.status).toBe(200);
      expect(res.text).toContain('getPetById');
    });
  });

  describe('getPetById', () => {
    test('finds a pet only through an order that has not been cancelled', async () => {
      await s.store.importOrders([order({ id: 1, petId: 10 }), order({ id: 2, petId: 20 })]);
      await s.store.cancelOrder(2);
      const key = await addKey(s.store);
      const app = await createApp({ store: s.store });

      const found = await request(app).get('/v1/pets/10').set('Authorization', `Bearer ${key}`);
      const gone = await request(app).get('/v1/pets/20').set('Authorization', `Bearer ${key}`);

      expect(found.status).toBe(200);
      expect(found.body).toEqual({ id: 10 });
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ code: 'pet_not_found', message: 'Pet 20 was not found', status: 404 });
    });
  });
});

eachStore((s) => {
  test('every call to a deprecated operation is counted by operation, whatever its answer; other operations are not', async () => {
    await s.store.importOrders([order({ id: 1, petId: 10 })]);
    const app = await createApp({ store: s.store });

    await request(app).get('/v1/pets/10').set(s.auth);
    await request(app).get('/v1/pets/11').set(s.auth);
    await request(app).get('/v1/pets/10');
    await request(app).delete('/v1/store/orders/1').set(s.auth);
    const metrics = await request(app).get('/metrics');

    expect(metrics.text).toContain('petstore_deprecated_requests_total{api_version="v1",operation="getPetById"} 3');
    expect(metrics.text).not.toContain('petstore_deprecated_requests_total{api_version="v1",operation="cancelOrder"}');
  });
});
