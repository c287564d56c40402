import type { ErrorObject, ValidateFunction } from 'ajv';
import type { OpenAPIBackend, Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { bodyOf, type CompiledRouter, type Operation } from './router';

/**
 * A request's parameters and body as the validator reads them (openapi-backend types each part as
 * `any`): path parameters as their strings, query values as strings or arrays, headers and cookies
 * by their lower-case names. The validator coerces these values in place.
 */
export interface ParsedRequest {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly cookies: Readonly<Record<string, unknown>>;
  readonly requestBody: unknown;
}

/**
 * The errors of a request against its operation, or null when it has none. `parsed` is the
 * CompiledRouter's parse of it, which the check coerces in place, as openapi-backend's does its own.
 */
export type RequestValidator = (request: Request, operation: Operation, parsed: ParsedRequest) => ErrorObject[] | null;

/** What the check needs of an operation, found once instead of per request. */
interface OperationCheck {
  validators: ValidateFunction[];
  /** Query parameters whose schema is an array: a single value is checked as an array of one. */
  arrays: ReadonlySet<string>;
  /** Query parameters declared as `application/json` content: each must parse. */
  json: readonly string[];
  /** Whether `application/json` is the only media type of the operation's body. */
  jsonBodyOnly: boolean;
}

/**
 * openapi-backend's `validateRequest`, step for step, for the CompiledRouter's parse: the same
 * parameters object, checked by the same compiled validators, with the same errors in the same
 * order (tests/http/request-validation.test.ts compares the two over every kind of parameter and body).
 * What it leaves out is per-request overhead: a second parse of the request, matching the operation
 * again, and lodash's passes over the parse and the operation's parameters, which together cost
 * more than the validators.
 * openapi-backend is pinned exactly, and the test fails if a release checks differently.
 */
export function compileRequestValidator(api: OpenAPIBackend<OpenAPIV3.Document>, router: CompiledRouter): RequestValidator {
  const checks = new Map<string, OperationCheck>();
  const checkOf = (operation: Operation): OperationCheck => {
    const { operationId = `${operation.method} ${operation.path}` } = operation;
    let check = checks.get(operationId);
    if (check === undefined) {
      const query = (operation.parameters ?? []).filter((p): p is OpenAPIV3.ParameterObject => !('$ref' in p) && p.in === 'query');
      const body = operation.requestBody;
      const media = body === undefined || '$ref' in body ? [] : Object.keys(body.content);
      check = {
        validators: api.validator.getRequestValidatorsForOperation(operationId) ?? [],
        arrays: new Set(
          query.filter(({ schema }) => schema !== undefined && !('$ref' in schema) && schema.type === 'array').map((p) => p.name),
        ),
        json: query.filter((p) => p.content?.['application/json'] !== undefined).map((p) => p.name),
        jsonBodyOnly: media.length === 1 && media[0] === 'application/json',
      };
      checks.set(operationId, check);
    }
    return check;
  };

  return (request, operation, parsed) => {
    const check = checkOf(operation);
    const errors: ErrorObject[] = [];
    const { params, query, headers, cookies, requestBody } = parsed;
    if (check.arrays.size > 0) {
      for (const name of Object.keys(query)) if (typeof query[name] === 'string' && check.arrays.has(name)) query[name] = [query[name]];
    }
    const parameters: Record<string, unknown> = {};
    if (params != null) parameters.path = params;
    if (query != null) parameters.query = query;
    if (headers != null) parameters.header = headers;
    if (cookies != null) parameters.cookie = cookies;
    if (typeof request.body !== 'object' && request.body !== undefined && check.jsonBodyOnly) {
      const problem = parseProblem(String(bodyOf(request)));
      if (problem !== undefined)
        errors.push({ keyword: 'parse', instancePath: '', schemaPath: '#/requestBody', params: [], message: problem });
    }
    if (check.json.length > 0) {
      const raw = router.parseRequestQuery(request);
      for (const name of check.json) {
        const value = raw[name];
        const problem = typeof value === 'string' ? parseProblem(value) : undefined;
        if (problem !== undefined) {
          errors.push({
            keyword: 'parse',
            instancePath: `/query/${name}`,
            schemaPath: `#/parameters/${name}`,
            params: [],
            message: problem,
          });
        }
      }
    }
    if (typeof requestBody === 'object' || mediaTypeOf(headers['content-type']) === 'application/json')
      parameters.requestBody = requestBody;
    for (const validate of check.validators) {
      validate(parameters);
      if (validate.errors) errors.push(...validate.errors);
    }
    return errors.length === 0 ? null : errors;
  };
}

/** The media type a `Content-Type` header names, lower case and without its parameters (the first, if it came twice); '' without one. */
export function mediaTypeOf(header: string | string[] | undefined): string {
  const [type = ''] = String((Array.isArray(header) ? header[0] : header) || '').split(';');
  return type.trim().toLowerCase();
}

/** What JSON.parse says of a text that is not JSON, as validateRequest reports it; undefined for JSON. */
function parseProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : undefined;
  }
}
