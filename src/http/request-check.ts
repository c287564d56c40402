import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorObject } from 'ajv';
import { isOptionalHeader } from '../contract/framework-statuses';
import { describeAjvError } from '../contract/validation';
import { ApiError } from '../errors';
import { mediaTypeOf, type OpenApi, type Operation, type RawRequest } from '../openapi';
import { compileInputReader, type InputReader, type OperationInputs } from './inputs';

/** What a request to an operation gives its handler: its parameters, converted, its body, and the name of its key. */
export interface RequestInputs extends OperationInputs {
  readonly body: unknown;
  readonly keyName: string | undefined;
}

/** The request steps between matching and handling: reading the body, and validating and reading the inputs. */
export interface RequestCheck {
  /**
   * The body an operation gets: parsed JSON when it declares an `application/json` body and the
   * request is JSON (415 when it is a media type the operation does not take, 400 when it does not
   * parse); nothing for an operation that declares no body, which ignores one.
   */
  body(operation: Operation, request: { headers: IncomingHttpHeaders; body?: Buffer | undefined }): unknown;
  /** The request checked against its operation, and its inputs read: a 400 ApiError naming the field when it breaks the document. */
  inputs(operation: Operation, request: RawRequest, keyName: string | undefined): RequestInputs;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Builds the request check of a document's operations, each one's input reader compiled once. */
export function createRequestCheck(api: OpenApi, undeclaredQuery: 'ignore' | 'reject'): RequestCheck {
  const readers = new Map(
    api.operations.map((operation) => [operation.operationId, compileInputReader(operation, { undeclared: undeclaredQuery })]),
  );
  // Optional headers an operation that declares no 400 ignores when they break their schema (see isOptionalHeader).
  const lenient = new Map(api.operations.map((operation) => [operation.operationId, lenientHeaders(operation)]));

  return {
    body: (operation, request) => {
      const declared = operation.requestBody?.content;
      if (declared === undefined || request.body === undefined || request.body.length === 0) return undefined;
      const mediaType = mediaTypeOf(request.headers['content-type']);
      const types = Object.keys(declared);
      if (!types.some((type) => type.toLowerCase() === mediaType)) {
        throw new ApiError('invalid_request', `The request body must be ${types.join(' or ')}`, {}, 415);
      }
      if (mediaType !== 'application/json') return request.body.toString('utf8');
      try {
        const parsed: unknown = JSON.parse(utf8.decode(request.body));
        return parsed;
      } catch {
        throw new ApiError('invalid_request', 'The request body is not valid JSON');
      }
    },
    inputs: (operation, request, keyName) => {
      const read = readers.get(operation.operationId);
      if (read === undefined) throw new Error(`no input reader for ${operation.operationId}`);
      const parsed = api.parse(request, operation);
      // The reader's values as they came: the validator coerces the parsed ones in place.
      const raw = { params: { ...parsed.params }, query: copied(parsed.query), headers: request.headers };
      const errors = api.validateRequest(request, operation, parsed);
      if (errors) {
        const ignored = ignoredHeaders(errors, lenient.get(operation.operationId));
        if (ignored === undefined)
          throw new ApiError('invalid_request', validationMessage(operation, parsed.requestBody, raw, errors, read));
        raw.headers = without(request.headers, ignored);
      }
      return { ...read(raw), body: parsed.requestBody, keyName };
    },
  };
}

/** A copy of parsed query values that coercing the original cannot reach (a value may be an array or an object). */
function copied(query: Readonly<Record<string, unknown>>): Record<string, unknown> {
  for (const _ in query) return structuredClone(query);
  return {};
}

/** The optional headers of an operation that declares no 400, lower case; none when it declares one. */
function lenientHeaders(operation: Operation): ReadonlySet<string> {
  if ('400' in operation.responses || '4XX' in operation.responses || 'default' in operation.responses) return new Set();
  return new Set(operation.parameters.filter(isOptionalHeader).map((parameter) => parameter.name.toLowerCase()));
}

/** The headers to ignore when every error is about one of the lenient headers; undefined when any is about something else. */
function ignoredHeaders(errors: readonly ErrorObject[], lenient: ReadonlySet<string> | undefined): Set<string> | undefined {
  if (lenient === undefined || lenient.size === 0) return undefined;
  const ignored = new Set<string>();
  for (const error of errors) {
    const [, location, name] = error.instancePath.split('/');
    if (location !== 'header' || name === undefined || !lenient.has(name)) return undefined;
    ignored.add(name);
  }
  return ignored;
}

function without(headers: IncomingHttpHeaders, names: ReadonlySet<string>): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!names.has(name)) kept[name] = value;
  return kept;
}

/**
 * A message for a request that failed validation, naming the parameter: the input reader's, when a
 * parameter breaks its type's strict rule (`05` for an id), else the validator's first error.
 */
function validationMessage(
  operation: Operation,
  body: unknown,
  raw: Parameters<InputReader>[0],
  errors: readonly ErrorObject[],
  read: InputReader,
): string {
  try {
    read(raw);
  } catch (err) {
    if (err instanceof ApiError) return err.message;
    throw err;
  }
  if (operation.requestBody?.required && body === undefined) return 'The request body is required';
  const first = errors[0];
  if (!first) return 'The request is malformed';
  return describeAjvError(first)
    .replace(/^header\.([^ .]+)/, (_, name: string) => declaredHeaderName(operation, name))
    .replace(/^(path|query)\./, '')
    .replace(/^requestBody\b/, 'body');
}

/** A header as the operation's document spells it (`Idempotency-Key`), for the lower-case name the validator gives. */
function declaredHeaderName(operation: Operation, lowerCase: string): string {
  for (const parameter of operation.parameters ?? []) {
    if ('in' in parameter && parameter.in === 'header' && parameter.name.toLowerCase() === lowerCase) return parameter.name;
  }
  return lowerCase;
}
