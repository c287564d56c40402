import fs from 'node:fs';
import request from 'supertest';
import { parse } from 'yaml';
import { createApp } from '../../src/app';
import { SPEC_PATH, cloneDocument, loadDocument } from '../../src/contract/document';
import { addKey, eachStore } from '../helpers/stores';

// The document the server runs on: served as written, and refused at startup when it cannot be served.
eachStore((s) => {
  describe('GET /v1/openapi.json', () => {
    test('serves the document exactly as written, with its $refs intact, without a key', async () => {
      const app = await createApp({ store: s.store });

      const res = await request(app).get('/v1/openapi.json');

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual(parse(fs.readFileSync(SPEC_PATH, 'utf8')));
      expect(res.text).toContain('"$ref":"#/components/schemas/Order"');
      expect(res.body.info.version).toBe('1.0.2');
    });

    test('keeps serving the original after requests have been routed and validated', async () => {
      const app = await createApp({ store: s.store });
      const key = await addKey(s.store);
      await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`).expect(200);

      const res = await request(app).get('/v1/openapi.json');

      expect(res.body).toEqual(parse(fs.readFileSync(SPEC_PATH, 'utf8')));
    });
  });

  describe('startup', () => {
    test('an operation in the spec without a handler stops the app from starting, naming it', async () => {
      const document = cloneDocument(loadDocument());
      document.paths['/store/inventory'] = {
        get: { operationId: 'getInventory', responses: { '200': { description: 'ok' } } },
      };

      await expect(createApp({ store: s.store, document })).rejects.toThrow('the spec has operations with no handler: getInventory');
    });
  });
});
