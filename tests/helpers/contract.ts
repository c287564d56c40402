import type { Express } from 'express';
import OpenAPIBackend from 'openapi-backend';
import request from 'supertest';
import { cloneDocument, loadDocument, specPath } from '../../src/contract/document';
import { exampleRequest } from '../../src/contract/examples';
import type { ApiVersion } from '../../src/contract/types';
import { ajvCustomizerFor, asValidatedDocument, createContractAjv, createOpenApi, openApiLineOf, type OpenApi } from '../../src/openapi';

/** Each version's document, loaded once per test file, and what checks responses against it. */
const contracts = new Map<
  ApiVersion,
  { api: OpenAPIBackend; ready: Promise<unknown>; validateErrorBody: (body: unknown) => boolean; ours: Promise<OpenApi> }
>();
function contract(version: ApiVersion) {
  let found = contracts.get(version);
  if (found === undefined) {
    const document = loadDocument(specPath(version));
    // The library itself, with the server's Ajv for the document's line (JSON Schema 2020-12 for 3.1).
    const line = openApiLineOf(document);
    const api = new OpenAPIBackend({
      definition: asValidatedDocument(cloneDocument(document)),
      apiRoot: `/${version}`,
      customizeAjv: ajvCustomizerFor(line),
    });
    // It checks every document against 3.0's schema; a 3.1 one meets the server's own check
    // (tests/openapi/document-check.test.ts), which is not what this helper checks.
    if (line === '3.1') api.validateDefinition = () => api.document;
    const validate = createContractAjv(document).compile(document.components?.schemas?.Error as object);
    const ours = createOpenApi(document, { apiRoot: `/${version}`, undeclaredQuery: 'ignore' });
    found = { api, ready: api.init(), validateErrorBody: (body) => validate(body), ours };
    contracts.set(version, found);
  }
  return found;
}

interface HttpResponse {
  status: number;
  body: unknown;
  headers: Record<string, unknown>;
}

/**
 * Asserts that a response is what the spec allows: a declared status for the operation,
 * a body valid against its schema, and for errors an Error whose `status` equals the HTTP status.
 */
export async function expectConforms(res: HttpResponse, operationId?: string, version: ApiVersion = 'v1'): Promise<void> {
  const { api, ready, validateErrorBody } = contract(version);
  await ready;
  if (res.status >= 400) {
    expect(res.headers['content-type']).toBe('application/json');
    expect(validateErrorBody(res.body)).toBe(true);
    expect((res.body as { status: number }).status).toBe(res.status);
  }
  if (operationId === undefined) return;
  const operation = api.getOperation(operationId);
  expect(operation?.responses).toHaveProperty(String(res.status));
  if (res.status === 204) {
    expect(res.body).toEqual({});
    expect(res.headers['content-length']).toBeUndefined();
    return;
  }
  const result = api.validateResponse(res.body, operationId, res.status);
  expect(result.errors).toBeNull();
}

/**
 * Sends operation K of a version a request built from its document (examples, else values generated from the
 * schemas: see src/contract/examples.ts), with `headers` added, and returns the response.
 */
export async function sendExample(
  app: Express,
  operationId: string,
  headers: Record<string, string> = {},
  version: ApiVersion = 'v1',
): Promise<request.Response> {
  const operation = (await contract(version).ours).operation(operationId);
  if (operation === undefined) throw new Error(`the document has no operation ${operationId}`);
  const example = exampleRequest(operation);
  const test = request(app)
    [example.method.toLowerCase() as 'get'](`/${version}${example.path}`)
    .query(example.query)
    .set({ ...example.headers, ...headers });
  return example.body === undefined ? test : test.send(example.body as object);
}
