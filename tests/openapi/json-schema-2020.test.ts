import type { Express } from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import { createApp } from '../../src/app';
import { cloneDocument, loadDocument } from '../../src/contract/document';
import { defineHandler, type HandlerDefinitions } from '../../src/http/define-handler';
import { asOpenApi31 } from '../../src/openapi';
import type { Store } from '../../src/store';
import { freshStorePerTest } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// An OpenAPI 3.1 document's schemas are JSON Schema 2020-12, whole: each keyword below is checked
// on a request (a 400 naming the field) and on a reply (a logged 500, never the wrong body). The
// document is v1's, moved to 3.1, with one more operation, POST /keywords, that takes a body of
// the Keywords schema and answers 200 with whatever the test sets.
const tmp = tempDir();
afterAll(tmp.cleanup);
let store: Store;
let key: string;
freshStorePerTest(tmp.dir, [], (made) => ({ store, key } = made));

const error = (ref: string) => ({ $ref: `#/components/responses/${ref}` });
const KEYWORDS = {
  type: 'object',
  required: ['kind'],
  properties: {
    kind: { const: 'keywords' },
    note: { type: ['string', 'null'], maxLength: 10 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    count: { $ref: '#/components/schemas/Keywords/$defs/positive' },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false },
    person: { $ref: '#/components/schemas/Named', required: ['last'] },
    shipDate: { type: 'string', format: 'date-time' },
    small: { type: 'integer', format: 'int32' },
    cardNumber: { type: 'string' },
    cardExpiry: { type: 'string' },
  },
  allOf: [{ properties: { extra: { type: 'string' } } }],
  unevaluatedProperties: false,
  dependentRequired: { cardNumber: ['cardExpiry'] },
  $defs: { positive: { type: 'integer', minimum: 1 } },
};
const NAMED = {
  type: 'object',
  required: ['first'],
  properties: { first: { type: 'string' }, last: { type: 'string' } },
};

/** v1's document in OpenAPI 3.1, with POST /keywords; `edit` changes the document after. */
function document31(edit: (document: Record<string, unknown>) => void = () => undefined): OpenAPIV3.Document {
  const document = asOpenApi31(cloneDocument(loadDocument())) as unknown as Record<string, unknown> & OpenAPIV3.Document;
  document.jsonSchemaDialect = 'https://spec.openapis.org/oas/3.1/dialect/base';
  Object.assign(document.components!.schemas!, { Keywords: KEYWORDS, Named: NAMED });
  const body = { 'application/json': { schema: { $ref: '#/components/schemas/Keywords' } } };
  document.paths['/keywords'] = {
    post: {
      operationId: 'echoKeywords',
      'x-scopes': ['orders:read'],
      requestBody: { required: true, content: body },
      responses: {
        '200': { description: 'The reply the test set.', content: body },
        '400': error('BadRequest'),
        '401': error('Unauthorized'),
        '413': error('PayloadTooLarge'),
        '415': { description: 'Not JSON.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        '500': error('InternalError'),
        '503': error('ServiceUnavailable'),
      },
    } as OpenAPIV3.OperationObject,
  };
  edit(document);
  return document;
}

/** What POST /keywords answers: the reply a test sets. */
let reply: unknown;
const modules = {
  echoKeywords: defineHandler('v1', 'echoKeywords' as 'listOrders', () => (async () => ({ status: 200, body: reply })) as never),
} as unknown as Partial<HandlerDefinitions>;

const app = (document = document31()): Promise<Express> => createApp({ store, document, modules });

const VALID = {
  kind: 'keywords',
  note: null,
  ratio: 0.5,
  count: 1,
  pair: ['a', 1],
  person: { first: 'Ada', last: 'Lovelace' },
  shipDate: '2026-12-01T10:00:00Z',
  small: 2147483647,
  cardNumber: '4111',
  cardExpiry: '12/27',
  extra: 'evaluated by allOf',
};

// Each case breaks one keyword: the field the 400 names, and the body that breaks it.
const BROKEN: Array<[keyword: string, named: string, body: Record<string, unknown>]> = [
  ['a type list without "null"', 'note', { ...VALID, note: 5 }],
  ['const', 'kind', { ...VALID, kind: 'other' }],
  ['numeric exclusiveMinimum', 'ratio', { ...VALID, ratio: 0 }],
  ['numeric exclusiveMaximum', 'ratio', { ...VALID, ratio: 1 }],
  ['a $ref into $defs', 'count', { ...VALID, count: 0 }],
  ['prefixItems', 'pair', { ...VALID, pair: ['a', 'b'] }],
  ['prefixItems with items: false', 'pair', { ...VALID, pair: ['a', 1, 2] }],
  ['unevaluatedProperties', 'bogus', { ...VALID, bogus: true }],
  ['dependentRequired', 'cardExpiry', { ...VALID, cardExpiry: undefined }],
  ['a $ref whose sibling adds to it', 'last', { ...VALID, person: { first: 'Ada' } }],
  ['a $ref whose target still applies beside its sibling', 'first', { ...VALID, person: { last: 'Lovelace' } }],
  ['format date-time, strictly', 'shipDate', { ...VALID, shipDate: '2026-12-01 10:00:00' }],
  // OpenAPI's own formats, which openapi-backend adds to the Ajv it makes; the 2020-12 Ajv is given them.
  ['format int32', 'small', { ...VALID, small: 2147483648 }],
];

test('a body that keeps every 2020-12 keyword is taken, and the reply that keeps them is sent', async () => {
  reply = VALID;

  const res = await request(await app())
    .post('/v1/keywords')
    .set('Authorization', `Bearer ${key}`)
    .send(VALID);

  expect(res.status).toBe(200);
  expect(res.body).toEqual(VALID);
});

test.each(BROKEN)('a request body that breaks %s is a 400 naming %s', async (_keyword, named, body) => {
  reply = VALID;

  const res = await request(await app())
    .post('/v1/keywords')
    .set('Authorization', `Bearer ${key}`)
    .send(body);

  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'invalid_request', status: 400 });
  expect((res.body as { message: string }).message).toContain(named);
});

test.each(BROKEN)('a reply that breaks %s is never sent: a 500', async (_keyword, _named, body) => {
  reply = JSON.parse(JSON.stringify(body));

  const res = await request(await app())
    .post('/v1/keywords')
    .set('Authorization', `Bearer ${key}`)
    .send(VALID);

  expect(res.status).toBe(500);
  expect(res.body).toMatchObject({ code: 'internal_error', status: 500 });
});

test.each([
  [
    'a jsonSchemaDialect this server does not check',
    (document: Record<string, unknown>) => (document.jsonSchemaDialect = 'https://example.com/my-dialect'),
    'jsonSchemaDialect "https://example.com/my-dialect" is not one this server checks',
  ],
  [
    '$dynamicRef, which the validator resolves only at a resource root',
    (document: Record<string, unknown>) =>
      Object.assign((document as unknown as OpenAPIV3.Document).components!.schemas!, {
        Tree: { $dynamicAnchor: 'node', type: 'object', properties: { children: { type: 'array', items: { $dynamicRef: '#node' } } } },
      }),
    '$dynamicRef and $dynamicAnchor are not supported',
  ],
  [
    'a 3.1 keyword the 3.1 schema refuses (a type that is not one)',
    (document: Record<string, unknown>) =>
      Object.assign((document as unknown as OpenAPIV3.Document).components!.schemas!, { Named: { type: 'person' } }),
    'Document is not valid OpenAPI',
  ],
])('a document with %s is refused at start, saying why', async (_case, edit, message) => {
  await expect(app(document31(edit))).rejects.toThrow(message);
});

test('a 3.0 document keeps its boolean exclusive bounds and nullable', async () => {
  const document = cloneDocument(loadDocument());
  Object.assign(document.components!.schemas!, {
    Bounded: {
      type: 'object',
      properties: {
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
        note: { type: 'string', nullable: true },
      },
    },
  });
  document.paths['/keywords'] = {
    post: {
      ...(document31().paths['/keywords']!.post as OpenAPIV3.OperationObject),
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Bounded' } } } },
      responses: {
        ...(document31().paths['/keywords']!.post as OpenAPIV3.OperationObject).responses,
        '200': { description: 'The reply.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Bounded' } } } },
      },
    },
  };
  const served = await app(document);
  const post = (body: object) => request(served).post('/v1/keywords').set('Authorization', `Bearer ${key}`).send(body);
  reply = { ratio: 0.5, note: null };

  expect((await post({ ratio: 0.5, note: null })).status).toBe(200);
  expect((await post({ ratio: 0 })).status).toBe(400);
  expect((await post({ ratio: 1 })).status).toBe(400);
  reply = { ratio: 1 };
  expect((await post({ ratio: 0.5 })).status).toBe(500);
});
