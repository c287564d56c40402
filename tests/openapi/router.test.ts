import { OpenAPIRouter, type Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { loadDocument } from '../../src/contract/document';
import { CompiledRouter } from '../../src/openapi/router';

// The compiled router must be a drop-in for the stock one: same operation, same parsed request.
describe('CompiledRouter', () => {
  const document = loadDocument();
  // A template with two parameters and a literal dot, to exercise more than the spec's own paths.
  const definition: OpenAPIV3.Document = {
    ...document,
    paths: {
      ...document.paths,
      '/pets/{petId}/photos/{photoId}.json': {
        get: { operationId: 'getPhoto', responses: { '200': { description: 'ok' } } },
      },
    },
  };
  const stock = new OpenAPIRouter({ definition, apiRoot: '/v1' });
  const compiled = new CompiledRouter({ definition, apiRoot: '/v1' });

  const requests: Request[] = [
    { method: 'GET', path: '/v1/store/orders', headers: { authorization: 'Bearer x' } },
    { method: 'get', path: '/v1/store/orders/', headers: {} },
    { method: 'DELETE', path: '/v1/store/orders/42', headers: { Authorization: 'Bearer x', 'X-Odd': ['a', 'b'] } },
    { method: 'DELETE', path: '/v1/store/orders/%2042', query: '', headers: {} },
    { method: 'DELETE', path: '/v1/store/orders/caf%C3%A9', headers: {} },
    { method: 'DELETE', path: '/v1/store/orders/1e3', query: 'a=1&b=2', headers: {} },
    { method: 'DELETE', path: '/v1/store/orders/7', headers: { cookie: 'a=1; b=2' } },
    { method: 'GET', path: '/v1/pet/9', headers: { 'if-none-match': 'W/"x"' } },
    { method: 'GET', path: '/v1/pets/3/photos/a%2Fb.json', headers: {} },
    { method: 'GET', path: '/v1/pets/3/photos/xjson', headers: {} },
    { method: 'PUT', path: '/v1/store/orders/1', headers: {} },
    { method: 'GET', path: '/v1/nowhere', headers: {} },
    { method: 'GET', path: '/elsewhere', headers: {} },
    { method: 'GET', path: '/v1', headers: {} },
    { method: 'GET', path: '/v1/', headers: {} },
    { method: 'GET', path: '/v1/store/orders//', headers: {} },
    { method: ' delete ', path: ' /v1/store/orders/42 ', headers: {} },
    { method: 'GET', path: 'v1/store/orders', headers: {} },
    { method: 'GET', path: '/v1/store/orders?status=x', headers: {} },
    { method: 'GET', path: '/v1x/store/orders', headers: {} },
  ];

  it.each(requests.map((request) => [`${request.method} ${request.path}`, request] as const))(
    'matches and parses %s as the stock router does',
    (_name, request) => {
      const operation = stock.matchOperation(request);
      expect(compiled.matchOperation(request)?.operationId).toBe(operation?.operationId);
      expect(compiled.parseRequest(request)).toEqual(stock.parseRequest(request));
      if (operation) {
        const ours = compiled.parseRequest(request, compiled.matchOperation(request, true));
        // The one intended difference: query parameters the operation does not declare are dropped.
        expect(ours).toEqual({ ...stock.parseRequest(request, operation), query: {} });
      }
      // The methods at the path (a 405's Allow): the ones the stock router matches, asked one by one.
      const stockMethods = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace']
        .filter((method) => stock.matchOperation({ ...request, method }) !== undefined)
        .map((method) => method.toUpperCase());
      expect([...compiled.methodsAt(request.path)].sort()).toEqual(stockMethods.sort());
    },
  );

  it('throws the stock messages for a miss, which openapi-backend tells 404 and 405 apart by', () => {
    expect(() => compiled.matchOperation({ method: 'GET', path: '/v1/nowhere', headers: {} }, true)).toThrow(/^404-notFound/);
    expect(() => compiled.matchOperation({ method: 'PUT', path: '/v1/store/orders', headers: {} }, true)).toThrow(/^405-methodNotAllowed/);
    expect(() => stock.matchOperation({ method: 'GET', path: '/v1/nowhere', headers: {} }, true)).toThrow(/^404-notFound/);
    expect(() => stock.matchOperation({ method: 'PUT', path: '/v1/store/orders', headers: {} }, true)).toThrow(/^405-methodNotAllowed/);
  });

  it('normalises a request and a path as the stock router does', () => {
    for (const request of requests) {
      expect(compiled.normalizeRequest(request)).toEqual(stock.normalizeRequest(request));
      const { path } = stock.normalizeRequest(request);
      expect(compiled.normalizePath(path)).toBe(stock.normalizePath(path));
    }
    const atRoot = new CompiledRouter({ definition, apiRoot: '/' });
    const stockAtRoot = new OpenAPIRouter({ definition, apiRoot: '/' });
    for (const path of ['/', '//store/orders', '/store/orders/', '/v1/store/orders'])
      expect(atRoot.normalizePath(path)).toBe(stockAtRoot.normalizePath(path));
  });

  it('gives each parse its own parameter objects, so coercing one cannot change another', () => {
    const request: Request = { method: 'DELETE', path: '/v1/store/orders/42', headers: {} };
    const operation = compiled.matchOperation(request, true);
    const first = compiled.parseRequest(request, operation);
    first.params.orderId = 42;
    expect(compiled.parseRequest(request, operation).params.orderId).toBe('42');
  });
});
