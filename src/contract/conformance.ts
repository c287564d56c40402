import type { ValidateFunction } from 'ajv';
import type { OpenAPIV3 } from 'openapi-types';
import { createOpenApi, statusMatch, type OpenApi, type Operation } from '../openapi';
import { undeclaredQueryPolicy } from './document';
import { describeAjvError } from './validation';

/** A response to check: its status, headers and parsed JSON body; `stream` marks a streamed array. */
export interface CheckedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  stream?: unknown;
}

/**
 * Checks a response against the spec: its status must be declared for the operation, its body
 * must match the declared schema (or be absent when none is declared), and its headers their
 * schemas. A response outside any operation must carry a valid Error. Returns null when it conforms.
 * The server runs it before sending a reply (an ApiError reply whose kind has passed once is not
 * checked again: it differs only in its free-text message); `contract-check` runs it on a deployment's.
 */
export function responseProblem(
  api: OpenApi,
  validateError: ErrorCheck,
  operation: Operation | undefined,
  reply: CheckedResponse,
): string | null {
  if (!operation) {
    return validateError(reply.body) ? null : `Error body invalid: ${JSON.stringify(validateError.errors)}`;
  }
  const declared = operation.responses;
  const response = statusMatch(reply.status, declared);
  if (!response) return `status ${reply.status} is not declared for ${operation.operationId}`;
  if (!response.content) {
    return reply.body === undefined ? null : `status ${reply.status} of ${operation.operationId} declares no body`;
  }
  // A streamed array is checked item by item as it is written (src/http/item-writer.ts): here,
  // only its status and headers can be.
  if (reply.stream) return headersProblem(api, operation, reply);
  if (reply.body === undefined) return `status ${reply.status} of ${operation.operationId} requires a body`;
  const body = api.validateResponse(reply.body, operation, reply.status);
  if (body) return `body invalid: ${body.map((e) => describeAjvError(e, 'body')).join('; ')}`;
  return headersProblem(api, operation, reply);
}

function headersProblem(api: OpenApi, operation: Operation, reply: CheckedResponse): string | null {
  const headers = api.validateResponseHeaders(reply.headers ?? {}, operation, reply.status);
  if (headers) return `headers invalid: ${headers.map((e) => describeAjvError(e)).join('; ')}`;
  return null;
}

/** The check of an Error body, for a response outside any operation. */
export type ErrorCheck = ValidateFunction;

/** The check of the document's Error schema, compiled now. */
export function errorCheck(api: OpenApi, document: OpenAPIV3.Document): ErrorCheck {
  const schema = document.components?.schemas?.Error;
  if (schema === undefined) throw new Error('the document has no Error schema in components.schemas');
  return api.compile(schema);
}

/** The spec's checks, compiled once, for a client of a deployment: the same schemas the server uses. */
export interface ContractChecker {
  readonly document: OpenAPIV3.Document;
  /** Null when the response conforms to `operationId` (or, without one, is a valid Error). */
  problem(operationId: string | undefined, response: CheckedResponse): string | null;
}

/** The checks of a document's responses, for a client of a deployment that serves it. */
export async function createContractChecker(document: OpenAPIV3.Document): Promise<ContractChecker> {
  const api = await createOpenApi(document, { apiRoot: '/', undeclaredQuery: undeclaredQueryPolicy(document) });
  const validateError = errorCheck(api, document);
  return {
    document,
    problem: (operationId, response) =>
      responseProblem(api, validateError, operationId === undefined ? undefined : api.operation(operationId), response),
  };
}
