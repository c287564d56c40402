import type { OpenAPIV3 } from 'openapi-types';
import { compileResponseBodyValidator } from '../../src/openapi/response-body';
import { describeReplyCheckAgainstLibrary } from '../helpers/library';

// The reply check's body check must answer exactly what openapi-backend's validateResponse
// answers for a reply of a known status (the same errors, in the same order) for every operation
// and status of a document; it only finds each status's validator once instead of per reply.
describe('the response body check', () => {
  // Beside the spec's own operations: a `2XX` range, a `default`, and a status that declares no body.
  const extra: OpenAPIV3.PathsObject = {
    '/things': {
      get: {
        operationId: 'getThings',
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['count'],
                  properties: { count: { type: 'integer', minimum: 0 } },
                },
              },
            },
          },
          '2XX': { description: 'other', content: { 'application/json': { schema: { type: 'string', maxLength: 3 } } } },
          '404': { description: 'none' },
          default: { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    },
  };

  const order = { id: 7, petId: 8, quantity: 2, shipDate: '2026-05-08T10:00:00Z', complete: true };
  // Bodies a reply may carry: none, orders right and wrong, lists, Errors right and wrong, and others.
  const bodies: unknown[] = [
    undefined,
    null,
    order,
    { ...order, status: 'shipped' },
    { ...order, status: 'lost' },
    { ...order, shipDate: '2026-13-45T99:99:99Z' },
    { ...order, colour: 'blue' },
    [order, { ...order, id: 8 }],
    [{ ...order, quantity: 0 }],
    { code: 'order_not_found', message: 'Order 7 was not found' },
    { code: 'order_not_found' },
    { count: 3 },
    { count: -1 },
    'abcd',
    'ab',
    42,
  ];
  describeReplyCheckAgainstLibrary({
    extra,
    inputs: bodies,
    title: 'answers every operation, status and body as validateResponse does',
    ours: compileResponseBodyValidator,
    library: (api) => (body, operation, status) => api.validateResponse(body, operation, status).errors ?? null,
    counted: ({ compared, passed, refused }) => {
      // The sets above exercise both answers, on every document.
      expect(compared).toBeGreaterThan(100);
      expect(passed).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    },
  });
});
