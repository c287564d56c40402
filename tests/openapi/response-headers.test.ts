import type { OpenAPIV3 } from 'openapi-types';
import { compileResponseHeadersValidator } from '../../src/openapi/response-headers';
import { describeReplyCheckAgainstLibrary } from '../helpers/library';

// The reply check's header check must answer exactly what openapi-backend's
// validateResponseHeaders answers (the same errors, in the same order) for every operation and
// status of a document; it only finds each status's validator once instead of per reply.
describe('the response headers check', () => {
  // Beside the spec's own operations: required headers, a `2XX` range, a `default`, and a status
  // that declares no headers.
  const extra: OpenAPIV3.PathsObject = {
    '/things': {
      get: {
        operationId: 'getThings',
        responses: {
          '200': {
            description: 'ok',
            headers: {
              'X-Count': { required: true, schema: { type: 'integer', minimum: 0 } },
              'X-Tag': { schema: { type: 'string', pattern: '^[a-z]+$' } },
            },
          },
          '2XX': { description: 'other', headers: { 'X-Range': { required: true, schema: { type: 'string', maxLength: 3 } } } },
          '404': { description: 'none' },
          default: { description: 'error', headers: { 'Retry-After': { schema: { type: 'integer' } } } },
        },
      },
    },
  };

  // Header sets a reply may carry: none, the common ones, valid and broken declared ones, names in
  // any case, and values of the wrong type.
  const headerSets: Array<Record<string, string>> = [
    {},
    { 'X-Request-Id': 'r1', 'Cache-Control': 'no-store' },
    { ETag: 'W/"Yl3Hc5n1K2vXy8Q0aBcDeF"' },
    { etag: 'not a tag' },
    { ETag: 'W/"Yl3Hc5n1K2vXy8Q0aBcDeF"', etag: 'W/"short"' },
    { 'WWW-Authenticate': 'Bearer realm="petstore-orders"' },
    { 'Retry-After': '1' },
    { 'Retry-After': 'soon' },
    { 'X-Count': '3', 'X-Tag': 'abc' },
    { 'x-count': '-1', 'X-TAG': 'ABC' },
    { 'X-Range': 'abcd' },
    { 'X-Range': 'ab', Deprecation: 'true', Sunset: 'Wed, 01 Jan 2031 00:00:00 GMT' },
  ];
  describeReplyCheckAgainstLibrary({
    extra,
    inputs: headerSets,
    title: 'answers every operation, status and header set as validateResponseHeaders does',
    ours: compileResponseHeadersValidator,
    library: (api) => (headers, operation, status) =>
      api.validator.validateResponseHeaders(headers, operation, { statusCode: status }).errors ?? null,
    counted: ({ compared, refused }) => {
      // The sets above exercise both answers, on every document.
      expect(compared).toBeGreaterThan(100);
      expect(refused).toBeGreaterThan(0);
    },
  });
});
