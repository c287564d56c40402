import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import { OpenAPIRouter, OpenAPIValidator, ValidationContext } from 'openapi-backend';
import { createApp } from '../../src/app';
import { cloneDocument, loadDocument, specPath } from '../../src/contract/document';
import { createOpenApi } from '../../src/openapi/adapter';
import request from 'supertest';
import { createContractAjv, customizeAjv, validatorsMade } from '../../src/openapi';
import { askingEachAjvOnce } from '../../src/openapi/ajv';
import { openSqliteStore } from '../../src/store';
import { addKey, order } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

const tmp = tempDir();
afterAll(tmp.cleanup);

/** openapi-backend's validator of the v1 document, with the server's customizeAjv. */
function libraryValidator(): OpenAPIValidator {
  const definition = cloneDocument(loadDocument());
  return new OpenAPIValidator({
    definition,
    customizeAjv,
    router: new OpenAPIRouter({ definition }),
    lazyCompileValidators: true,
  });
}

/** An Ajv for `context`, made as openapi-backend makes its own. */
function ajvFor(context: ValidationContext, options: { coerceTypes?: boolean } = {}) {
  return libraryValidator().getAjv(context, options);
}

const ORDER_ID: OpenAPIV3.SchemaObject = { type: 'integer', minimum: 1, maximum: 9007199254740991 };
const SHIP: OpenAPIV3.SchemaObject = {
  type: 'object',
  required: ['shipDate'],
  additionalProperties: false,
  properties: { shipDate: { type: 'string', format: 'date-time' }, note: { type: 'string', pattern: '^[a-z]+$' } },
};

describe("validators made through customizeAjv's Ajvs", () => {
  test('an equal schema on an Ajv set up the same way gets the validator made before; another setup gets its own', () => {
    const first = ajvFor(ValidationContext.Response).compile(structuredClone(SHIP));
    const again = ajvFor(ValidationContext.Response).compile(structuredClone(SHIP));
    expect(again).toBe(first);

    const params = ajvFor(ValidationContext.Params, { coerceTypes: true }).compile(structuredClone(ORDER_ID));
    const response = ajvFor(ValidationContext.Response).compile(structuredClone(ORDER_ID));
    expect(params).not.toBe(response);
    // The setups differ in behaviour, so sharing across them would be wrong: only Params coerces.
    expect(params('5')).toBe(true);
    expect(response('5')).toBe(false);
  });

  test('contexts set up alike share one Ajv', () => {
    expect(ajvFor(ValidationContext.ResponseHeaders, { coerceTypes: true })).toBe(ajvFor(ValidationContext.Params, { coerceTypes: true }));
    expect(ajvFor(ValidationContext.RequestBody)).toBe(ajvFor(ValidationContext.Response));
    expect(ajvFor(ValidationContext.Response)).not.toBe(ajvFor(ValidationContext.Params, { coerceTypes: true }));
  });

  test("a served validator asks openapi-backend for each set-up's Ajv once, and gets the one the library's own getAjv gives", () => {
    const validator = libraryValidator();
    const params = validator.getAjv(ValidationContext.Params, { coerceTypes: true });
    const response = validator.getAjv(ValidationContext.Response);
    const library = jest.spyOn(validator, 'getAjv');
    askingEachAjvOnce(validator);

    expect(validator.getAjv(ValidationContext.Params, { coerceTypes: true })).toBe(params);
    expect(validator.getAjv(ValidationContext.ResponseHeaders, { coerceTypes: true })).toBe(params);
    expect(validator.getAjv(ValidationContext.Response)).toBe(response);
    expect(validator.getAjv(ValidationContext.RequestBody)).toBe(response);
    expect(library).toHaveBeenCalledTimes(2);
  });

  test("an Ajv for a document's schemas outside a request is made only for a document its line's schema passes", () => {
    // These Ajvs compile schemas without checking each against the meta-schema: the document's check comes first.
    const document = cloneDocument(loadDocument());
    Object.assign(document.components!.schemas!.Order!, { required: 'id' });

    expect(() => createContractAjv(document)).toThrow(/^Document is not valid OpenAPI\. \d+ validation errors:\n/);
    expect(createContractAjv(loadDocument()).compile(structuredClone(ORDER_ID))(5)).toBe(true);
  });

  test.each(['v1', 'v3'] as const)(
    "%s: a served document's Ajv for schemas outside a request is the one createContractAjv gives",
    async (version) => {
      const document = loadDocument(specPath(version));
      const api = await createOpenApi(document, { apiRoot: `/${version}`, undeclaredQuery: 'ignore' });

      expect(api.ajv).toBe(createContractAjv(document));
    },
  );

  test('a validator compiled on its first call answers, and reports errors, exactly as one compiled at once', () => {
    const lazy = ajvFor(ValidationContext.RequestBody).compile(structuredClone(SHIP));
    const direct = new Ajv({ strict: false });
    addFormats(direct, { mode: 'full' });
    const eager = direct.compile(structuredClone(SHIP));
    const values: unknown[] = [
      { shipDate: '2026-01-01T00:00:00Z' },
      { shipDate: '2026-01-01T00:00:00' },
      { shipDate: '2026-01-01T00:00:00Z', note: 'UPPER' },
      { shipDate: '2026-01-01T00:00:00Z', other: 1 },
      { shipDate: '2026-02-30T00:00:00Z' },
      'not an object',
      { shipDate: '2026-01-01T00:00:00+05:30', note: 'fine' },
    ];
    for (const value of values) {
      expect([lazy(value), lazy.errors ?? null]).toEqual([eager(value), eager.errors ?? null]);
    }
  });

  test('the validators a server calls are compiled before it serves: its requests compile none', async () => {
    const store = openSqliteStore(`${tmp.dir}/compiled.db`);
    const key = await addKey(store);
    await store.importOrders([order({ id: 1 }), order({ id: 2 })]);
    const app = await createApp({ store });
    const before = validatorsMade();
    const auth = { Authorization: `Bearer ${key}` };
    try {
      for (const [version, id] of [
        ['v1', 1],
        ['v2', 2],
      ] as const) {
        expect((await request(app).get(`/${version}/store/orders`).set(auth)).status).toBe(200);
        expect((await request(app).get(`/${version}/store/orders`)).status).toBe(401);
        expect((await request(app).delete(`/${version}/store/orders/${id}`).set(auth)).status).toBe(204);
        expect((await request(app).delete(`/${version}/store/orders/${id}`).set(auth)).status).toBe(404);
        expect((await request(app).delete(`/${version}/store/orders/x`).set(auth)).status).toBe(400);
      }
      expect((await request(app).get('/v2/store/orders?limit=1&status=pending').set(auth)).status).toBe(200);
      expect((await request(app).get('/v2/store/orders?limit=0').set(auth)).status).toBe(400);
      expect(validatorsMade()).toBe(before);
    } finally {
      await store.close();
    }
  });
});
