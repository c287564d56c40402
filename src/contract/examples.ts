import { sample } from 'openapi-sampler';
import type { OpenAPIV3 } from 'openapi-types';
import type { Operation } from '../openapi';

/** A value the document gives or implies: its example, else one generated from its schema. */
type Exemplified = Pick<OpenAPIV3.MediaTypeObject, 'example' | 'examples' | 'schema'>;

/** A response built from the document alone, as a mock answers it. */
export interface ExampleResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/** A request built from the document alone: every parameter and the body, as raw values. */
export interface ExampleRequest {
  method: string;
  /** The operation's path with its parameters filled in, relative to the API root. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
}

/**
 * The value of a parameter, header or media type: its `example`, else its first `examples` entry,
 * else one openapi-sampler generates from its schema (within its bounds, formats and enums).
 * `direction` leaves out the fields that only go the other way (readOnly in a request, writeOnly in
 * a response). The object must be dereferenced.
 */
export function exampleOf(source: Exemplified, direction: 'request' | 'response'): unknown {
  if (source.example !== undefined) return source.example;
  const [first] = Object.values(source.examples ?? {});
  if (first !== undefined && !('$ref' in first) && first.value !== undefined) return first.value;
  if (source.schema === undefined) return undefined;
  // A dereferenced OpenAPI 3.0 schema, which openapi-sampler reads; its types are JSON Schema 7's.
  return sample(source.schema as Parameters<typeof sample>[0], direction === 'request' ? { skipReadOnly: true } : { skipWriteOnly: true });
}

/**
 * The response a mock of `operation` gives: its first declared success status (2xx, lowest first),
 * the example JSON body of that response if it declares one, and a value for each header it declares.
 * Throws, naming the operation, when it declares no success response.
 */
export function exampleResponse(operation: Operation): ExampleResponse {
  const responses = operation.responses;
  const status = Object.keys(responses)
    .filter((code) => /^2\d\d$/.test(code))
    .sort()[0];
  if (status === undefined) throw new Error(`operation ${operation.operationId} declares no 2xx response to mock`);
  const response = responses[status];
  if (response === undefined) throw new Error(`operation ${operation.operationId} declares no ${status} response`);
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    if (!('$ref' in header)) headers[name] = String(exampleOf(header, 'response'));
  }
  const json = response.content?.['application/json'];
  return { status: Number(status), headers, ...(json === undefined ? {} : { body: exampleOf(json, 'response') }) };
}

/**
 * A request to `operation` built from the document: a value for every path parameter, every
 * required query parameter and header, and the JSON body when it declares one.
 */
export function exampleRequest(operation: Operation): ExampleRequest {
  const request: ExampleRequest = { method: operation.method.toUpperCase(), path: operation.path, query: {}, headers: {} };
  for (const parameter of operation.parameters) {
    if (parameter.in !== 'path' && !parameter.required) continue;
    const value = String(exampleOf(parameter, 'request'));
    if (parameter.in === 'path') request.path = request.path.replace(`{${parameter.name}}`, encodeURIComponent(value));
    else if (parameter.in === 'query') request.query[parameter.name] = value;
    else if (parameter.in === 'header') request.headers[parameter.name] = value;
  }
  const json = operation.requestBody?.content['application/json'];
  if (json !== undefined) request.body = exampleOf(json, 'request');
  return request;
}
