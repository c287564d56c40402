import type OpenAPIBackend from 'openapi-backend';
import type { Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { loadDocument, specPath } from '../../src/contract/document';
import { compileRequestValidator } from '../../src/openapi/request-validation';
import { useCompiledRouter } from '../../src/openapi/router';
import { pinnedLibrary } from '../helpers/library';

// The dispatcher's request check must answer exactly what openapi-backend's validateRequest
// answers (the same errors, in the same order), for every kind of parameter and body a document
// can declare; it only skips the second match and the lodash passes around the same validators.
describe('the request check', () => {
  // Beside the spec's own operations: every parameter location, an array and a JSON query
  // parameter, a required header, and JSON and text bodies.
  const extra: OpenAPIV3.PathsObject = {
    '/things/{thingId}': {
      post: {
        operationId: 'postThing',
        parameters: [
          { name: 'thingId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } },
          { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string', maxLength: 3 } } },
          { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
          { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 10 } },
          { name: 'X-Trace', in: 'header', required: true, schema: { type: 'string', pattern: '^[a-z]+$' } },
          { name: 'session', in: 'cookie', schema: { type: 'string', minLength: 2 } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } }, additionalProperties: false },
            },
          },
        },
        responses: { '204': { description: 'done' } },
      },
      put: {
        operationId: 'putThingText',
        parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'integer' } }],
        requestBody: { content: { 'text/plain': { schema: { type: 'string', maxLength: 5 } } } },
        responses: { '204': { description: 'done' } },
      },
    },
  };

  const v1 = loadDocument();
  const documents: Array<[string, string, OpenAPIV3.Document]> = [
    ['v1', '/v1', { ...v1, paths: { ...v1.paths, ...extra } }],
    ['v2', '/v2', loadDocument(specPath('v2'))],
  ];

  const requests: Record<string, Request[]> = {
    v1: [
      { method: 'get', path: '/v1/store/orders', headers: { authorization: 'Bearer x' } },
      { method: 'get', path: '/v1/store/orders', query: 'status=odd&_=1', headers: {} },
      { method: 'delete', path: '/v1/store/orders/42', headers: { Authorization: 'Bearer x' } },
      { method: 'delete', path: '/v1/store/orders/abc', headers: {} },
      { method: 'delete', path: '/v1/store/orders/0', headers: {} },
      { method: 'delete', path: '/v1/store/orders/99999999999999999999', headers: {} },
      { method: 'delete', path: '/v1/store/orders/7', headers: { cookie: 'a=1; b=2' } },
      { method: 'get', path: '/v1/pets/9', headers: { 'if-none-match': 'W/"x"' } },
      { method: 'get', path: '/v1/pets/nine', headers: {} },
      { method: 'post', path: '/v1/things/3', headers: { 'x-trace': 'abc', 'content-type': 'application/json' }, body: { name: 'n' } },
      {
        method: 'post',
        path: '/v1/things/3',
        query: 'tags=ab',
        headers: { 'x-trace': 'abc', 'content-type': 'application/json' },
        body: { name: 'n' },
      },
      { method: 'post', path: '/v1/things/3', query: 'tags=abcd&tags=x', headers: { 'x-trace': 'abc' }, body: { name: 'n' } },
      {
        method: 'post',
        path: '/v1/things/3',
        query: 'filter=%7B%22a%22%3A1%7D&limit=4',
        headers: { 'x-trace': 'abc' },
        body: { name: 'n' },
      },
      { method: 'post', path: '/v1/things/3', query: 'filter=%7Bnot&limit=40', headers: { 'x-trace': 'abc' }, body: { name: 'n' } },
      { method: 'post', path: '/v1/things/0', headers: { 'X-Trace': 'ABC', cookie: 'session=x' }, body: { name: 1, extra: true } },
      { method: 'post', path: '/v1/things/3', headers: {}, body: undefined },
      {
        method: 'post',
        path: '/v1/things/3',
        headers: { 'x-trace': 'abc', 'content-type': 'application/json; charset=utf-8' },
        body: null,
      },
      { method: 'post', path: '/v1/things/3', headers: { 'x-trace': 'abc', 'content-type': 'application/json' }, body: [1, 2] },
      { method: 'put', path: '/v1/things/3', headers: { 'content-type': 'text/plain' }, body: 'short' },
      { method: 'put', path: '/v1/things/3', headers: { 'content-type': 'text/plain' }, body: 'far too long' },
      { method: 'put', path: '/v1/things/x', headers: {} },
    ],
    v2: [
      { method: 'get', path: '/v2/store/orders', headers: {} },
      { method: 'get', path: '/v2/store/orders', query: 'limit=5&status=pending&petId=3&complete=true', headers: {} },
      { method: 'get', path: '/v2/store/orders', query: 'limit=0&status=lost&complete=maybe', headers: {} },
      { method: 'get', path: '/v2/store/orders', query: 'shipDateFrom=2026-12-01T00:00:00Z&shipDateTo=yesterday', headers: {} },
      { method: 'get', path: '/v2/store/orders', query: 'cursor=a%20b&limit=5&limit=6', headers: {} },
      { method: 'get', path: '/v2/store/orders', query: 'unknown=1', headers: {} },
      { method: 'get', path: '/v2/store/orders/12', headers: {} },
      { method: 'get', path: '/v2/store/orders/12', headers: { 'if-none-match': 'W/"x"' } },
      { method: 'get', path: '/v2/store/orders/12', headers: { 'if-none-match': 'x'.repeat(8193) } },
      { method: 'get', path: '/v2/store/orders/012', query: 'fields=id', headers: {} },
      { method: 'delete', path: '/v2/store/orders/12', headers: {} },
      { method: 'delete', path: '/v2/store/orders/-1', headers: {} },
      { method: 'get', path: '/v2/store/order-events', headers: {} },
      { method: 'get', path: '/v2/store/order-events', query: 'from=latest&limit=1000&wait=30', headers: {} },
      { method: 'get', path: '/v2/store/order-events', query: 'after=abc.def&wait=31&from=newest', headers: {} },
      { method: 'get', path: '/v2/store/order-events', query: 'after=a%20b&limit=0&wait=-1', headers: {} },
      { method: 'get', path: '/v2/store/order-events', query: 'cursor=x', headers: {} },
    ],
  };

  describe.each(documents)('%s', (version, apiRoot, document) => {
    let api: OpenAPIBackend<OpenAPIV3.Document>;
    let check: ReturnType<typeof compileRequestValidator>;

    beforeAll(async () => {
      api = await pinnedLibrary(document, apiRoot);
      check = compileRequestValidator(api, useCompiledRouter(api, apiRoot));
    });

    it.each(
      requests[version]!.map(
        (request) => [`${request.method} ${request.path}?${typeof request.query === 'string' ? request.query : ''}`, request] as const,
      ),
    )('answers %s as validateRequest does', (_name, request) => {
      const operation = api.router.matchOperation(request, true);
      const stock = api.validator.validateRequest(request, operation).errors;
      expect(check(request, operation, api.router.parseRequest(request, operation))).toEqual(stock);
    });

    it('covers every operation of the document with at least one request', () => {
      const covered = new Set(requests[version]!.map((request) => api.router.matchOperation(request)?.operationId));
      expect(
        api
          .getOperations()
          .map((operation) => operation.operationId)
          .filter((id) => !covered.has(id)),
      ).toEqual([]);
    });
  });

  it('finds errors in a request that has them, so the comparison above compares something', async () => {
    const [, apiRoot, document] = documents[0]!;
    const api = await pinnedLibrary(document, apiRoot);
    const check = compileRequestValidator(api, useCompiledRouter(api, apiRoot));
    const request: Request = { method: 'delete', path: '/v1/store/orders/abc', headers: {} };
    const operation = api.router.matchOperation(request, true);
    expect(check(request, operation, api.router.parseRequest(request, operation))).toEqual([
      expect.objectContaining({ instancePath: '/path/orderId', keyword: 'type' }),
    ]);
    const valid: Request = { method: 'delete', path: '/v1/store/orders/5', headers: {} };
    const validOperation = api.router.matchOperation(valid, true);
    expect(check(valid, validOperation, api.router.parseRequest(valid, validOperation))).toBeNull();
  });
});
