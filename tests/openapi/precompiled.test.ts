import path from 'node:path';
import { loadDocument, specPath } from '../../src/contract/document';
import { createApp } from '../../src/app';
import { validatorsCompiled, validatorsMade } from '../../src/openapi';
import { makeStartValidators } from '../../src/start-validators';
import { openSqliteStore } from '../../src/store';
import request from 'supertest';
import { addKey, order } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// The build compiles every validator a start makes (scripts/precompile.mjs, src/start-validators.ts);
// a start takes them from its module. `npm test` builds first, so the module is there, and these
// tests, run from source, find it by its fingerprint. That the module is exactly the code this
// process's Ajv writes is tests/openapi/precompiled-record.test.ts's.
const tmp = tempDir();
afterAll(tmp.cleanup);

describe("a start's validators", () => {
  test('are every one taken from the build: none is compiled', async () => {
    await makeStartValidators();

    expect(validatorsMade()).toBeGreaterThan(50);
    expect(validatorsCompiled()).toBe(0);
  });

  test('of a document edited since the build are compiled, and check what the edit says', async () => {
    const document = loadDocument(specPath('v2'));
    const edited = structuredClone(document);
    const limit = edited.paths['/store/orders']?.get?.parameters?.find((parameter) => 'name' in parameter && parameter.name === 'limit');
    if (limit === undefined || '$ref' in limit || limit.schema === undefined || '$ref' in limit.schema) {
      throw new Error("v2's listOrders declares its limit with an inline schema");
    }
    limit.schema.maximum = 7;
    const store = openSqliteStore(path.join(tmp.dir, 'edited.db'));
    try {
      const key = await addKey(store);
      await store.importOrders([order({ id: 1 })]);
      const before = validatorsCompiled();
      const app = await createApp({ store, versions: { v2: { document: edited } } });

      expect(validatorsCompiled()).toBeGreaterThan(before);
      const auth = { Authorization: `Bearer ${key}` };
      expect((await request(app).get('/v2/store/orders?limit=7').set(auth)).status).toBe(200);
      const refused = await request(app).get('/v2/store/orders?limit=8').set(auth);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/limit/);
    } finally {
      await store.close();
    }
  });
});
