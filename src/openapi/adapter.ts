import type { IncomingHttpHeaders } from 'node:http';
import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import OpenAPIBackend, { ValidationContext, type Operation as BackendOperation, type Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { ajvCustomizerFor, askingEachAjvOnce, compileNow, compileUsedValidators } from './ajv';
import { asValidatedDocument, openApiLineOf, unsupportedSchemaFeatures } from './dialect';
import { useDocumentCheck } from './document-check';
import { builtDefinition, definitionKey, recordDefinition, useBuiltDefinition } from './dereferenced';
import { compileRequestValidator, type ParsedRequest } from './request-validation';
import { compileResponseBodyValidator } from './response-body';
import { compileResponseHeadersValidator } from './response-headers';
import { useCompiledRouter, type CompiledRouter, type UndeclaredQuery } from './router';

export type { ParsedRequest };

/** A request as the router reads it: method, path (percent-encoding intact), query string, headers and the parsed body. */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly query?: string;
  readonly headers: IncomingHttpHeaders;
  readonly body?: unknown;
}

/**
 * An operation of a document, dereferenced: what openapi-backend gives, with its types narrowed
 * once, here, to what a dereferenced OpenAPI 3.0 document holds (no `$ref` is left in it).
 */
export interface Operation {
  readonly operationId: string;
  /** Lower case, as the router matches it. */
  readonly method: string;
  /** The path template, relative to the API root. */
  readonly path: string;
  readonly parameters: readonly OpenAPIV3.ParameterObject[];
  readonly requestBody: OpenAPIV3.RequestBodyObject | undefined;
  readonly responses: Readonly<Record<string, OpenAPIV3.ResponseObject>>;
  /** The operation's own requirements, else the document's (the router merges them); none means it is open. */
  readonly security: readonly OpenAPIV3.SecurityRequirementObject[];
}

/**
 * One version's document as the server uses it, on openapi-backend: the only module that imports
 * the library. Every replacement of a part of it (the router, the definition check, the request
 * validation, the response headers' check, the Ajv compile cache and the Ajv asked for once, the
 * dereference the build made) is installed here, and each has a test that fails if the pinned
 * library changes under it.
 */
export interface OpenApi {
  /** Every operation of the document, in its order. */
  readonly operations: readonly Operation[];
  /** An operation by its id. */
  operation(operationId: string): Operation | undefined;
  /** The operation a request's method and path name, or undefined (a 404 or a 405). */
  match(request: RawRequest): Operation | undefined;
  /** The methods a path answers to, upper case, in the document's order; none outside the API root. */
  methodsAt(path: string): string[];
  /** The request's parameters and body as the validator reads them. */
  parse(request: RawRequest, operation: Operation): ParsedRequest;
  /** The request's problems against its operation, or null; coerces `parsed` in place, as the validator does. */
  validateRequest(request: RawRequest, operation: Operation, parsed: ParsedRequest): ErrorObject[] | null;
  /** A response body's problems against what the operation declares for its status, or null. */
  validateResponse(body: unknown, operation: Operation, status: number): ErrorObject[] | null;
  /** A response's headers' problems against what the operation declares for its status, or null. */
  validateResponseHeaders(headers: Readonly<Record<string, string>>, operation: Operation, status: number): ErrorObject[] | null;
  /** An Ajv set up as the validator's own, for schemas checked outside a request. */
  readonly ajv: Ajv;
  /** Compiles a schema of the document with that Ajv now, so that no request waits for it. */
  compile(schema: object): ValidateFunction;
}

/** How a document is served: where its paths start (`/v1`), and what it does with an undeclared query parameter. */
interface OpenApiOptions {
  readonly apiRoot: string;
  readonly undeclaredQuery: UndeclaredQuery;
}

/** The router and validators built for each frozen document, by its options. */
const built = new WeakMap<OpenAPIV3.Document, Map<string, Promise<OpenApi>>>();

/**
 * The document's router and validators. They depend only on the document and the options, so a
 * frozen document (which cannot change) is built once for each set of options, however many apps
 * serve it; a build that fails is not kept.
 */
export function createOpenApi(document: OpenAPIV3.Document, options: OpenApiOptions): Promise<OpenApi> {
  if (!Object.isFrozen(document)) return buildOpenApi(document, options);
  let byOptions = built.get(document);
  if (byOptions === undefined) built.set(document, (byOptions = new Map<string, Promise<OpenApi>>()));
  const key = `${options.apiRoot} ${options.undeclaredQuery}`;
  const known = byOptions.get(key);
  if (known !== undefined) return known;
  const building = buildOpenApi(document, options);
  byOptions.set(key, building);
  building.catch(() => byOptions.delete(key));
  return building;
}

async function buildOpenApi(document: OpenAPIV3.Document, options: OpenApiOptions): Promise<OpenApi> {
  const line = openApiLineOf(document);
  const unsupported = unsupportedSchemaFeatures(document);
  if (unsupported.length > 0) throw new Error(`The document cannot be checked as written: ${unsupported.join('; ')}`);
  const given = asValidatedDocument(structuredClone(document));
  const key = definitionKey(given);
  const built = builtDefinition(key);
  const api = new OpenAPIBackend({
    definition: built ?? given,
    apiRoot: options.apiRoot,
    strict: true,
    customizeAjv: ajvCustomizerFor(line),
    // A definition the build dereferenced is taken as it is (./dereferenced.ts).
    quick: built !== undefined,
  });
  useDocumentCheck(api, document);
  if (built !== undefined) useBuiltDefinition(api, built);
  await api.init();
  if (built === undefined) recordDefinition(key, api.definition);
  askingEachAjvOnce(api.validator);
  compileUsedValidators(api);
  const router = useCompiledRouter(api, options.apiRoot, options.undeclaredQuery);
  const validateRequest = compileRequestValidator(api, router);
  const validateResponseBody = compileResponseBodyValidator(api);
  const validateResponseHeaders = compileResponseHeadersValidator(api);
  // The Ajv its response validators are compiled with: the one createContractAjv gives for this
  // document, without checking the document again or building a second validator for it.
  const ajv = api.validator.getAjv(ValidationContext.Response);

  const library = new Map<Operation, BackendOperation<OpenAPIV3.Document>>();
  const ours = new Map<BackendOperation<OpenAPIV3.Document>, Operation>();
  const operations = router.getOperations().map((operation) => {
    const typed = narrowed(operation);
    library.set(typed, operation);
    ours.set(operation, typed);
    return typed;
  });
  const theirs = (operation: Operation): BackendOperation<OpenAPIV3.Document> => {
    const found = library.get(operation);
    if (found === undefined) throw new Error(`${operation.operationId} is not an operation of this document`);
    return found;
  };

  return {
    operations,
    operation: (operationId) => operations.find((operation) => operation.operationId === operationId),
    match: (request) => matched(router, ours, libraryRequest(request)),
    methodsAt: (path) => router.methodsAt(path),
    parse: (request, operation) => router.parseRequest(libraryRequest(request), theirs(operation)),
    validateRequest: (request, operation, parsed) => validateRequest(libraryRequest(request), theirs(operation), parsed),
    validateResponse: (body, operation, status) => validateResponseBody(body, theirs(operation), status),
    validateResponseHeaders: (headers, operation, status) => validateResponseHeaders(headers, theirs(operation), status),
    ajv,
    compile: (schema) => {
      const validate = ajv.compile<unknown>(schema);
      compileNow(validate);
      return validate;
    },
  };
}

/**
 * A request as openapi-backend types it. Its header values are typed as never absent; Node's
 * (IncomingHttpHeaders) may be undefined only for a name that is not there, which the library's
 * lookups treat alike.
 */
function libraryRequest(request: RawRequest): Request {
  return request as Request;
}

function matched(
  router: CompiledRouter,
  ours: ReadonlyMap<BackendOperation<OpenAPIV3.Document>, Operation>,
  request: Request,
): Operation | undefined {
  const operation = router.matchOperation(request);
  return operation === undefined ? undefined : ours.get(operation);
}

/**
 * The library's operation with its types narrowed: openapi-backend types a dereferenced document's
 * fields as the document's (each may still be a `$ref`), and its `init` has resolved every `$ref`.
 */
function narrowed(operation: BackendOperation<OpenAPIV3.Document>): Operation {
  if (operation.operationId === undefined) throw new Error(`${operation.method.toUpperCase()} ${operation.path} has no operationId`);
  return {
    operationId: operation.operationId,
    method: operation.method,
    path: operation.path,
    parameters: (operation.parameters ?? []) as OpenAPIV3.ParameterObject[],
    requestBody: operation.requestBody as OpenAPIV3.RequestBodyObject | undefined,
    responses: (operation.responses ?? {}) as Record<string, OpenAPIV3.ResponseObject>,
    security: operation.security ?? [],
  };
}
