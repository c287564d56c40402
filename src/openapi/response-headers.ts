import type { ErrorObject, ValidateFunction } from 'ajv';
import { SetMatchType, type OpenAPIBackend, type Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { perOperationAndStatus, statusMatch } from './by-status';

/** A reply's headers' errors against what its operation declares for its status, or null when it has none. */
export type ResponseHeadersValidator = (
  headers: Readonly<Record<string, string>>,
  operation: Operation<OpenAPIV3.Document>,
  status: number,
) => ErrorObject[] | null;

/** The header validators of an operation's responses, by status, as openapi-backend builds them: one per set match type. */
type ValidatorsByStatus = Readonly<Record<string, Readonly<Partial<Record<SetMatchType, ValidateFunction>>>>>;

/**
 * openapi-backend's `validateResponseHeaders`, step for step: the status's validator found as the
 * library finds it (the status, else its `2XX` range, else `default`), given the headers by their
 * lower-case names, with the same errors in the same order (tests/openapi/response-headers.test.ts
 * compares the two over every operation and status of the documents). What it leaves out is
 * per-reply overhead: finding the status's validator again, and lodash's passes over the headers
 * and the errors, which together cost more than the validator.
 * openapi-backend is pinned exactly, and the test fails if a release checks differently.
 */
export function compileResponseHeadersValidator(api: OpenAPIBackend<OpenAPIV3.Document>): ResponseHeadersValidator {
  const validatorOf = perOperationAndStatus((operation: Operation<OpenAPIV3.Document>, status: number): ValidateFunction | null => {
    const { operationId } = operation;
    if (operationId === undefined) throw new Error('Unknown operation');
    // The library's map for the operation: null when none of its responses declares a header.
    const byStatus: ValidatorsByStatus | null = api.validator.getResponseHeadersValidatorForOperation(operationId);
    return (byStatus === null ? undefined : statusMatch(status, byStatus))?.[SetMatchType.Any] ?? null;
  });

  return (headers, operation, status) => {
    const validate = validatorOf(operation, status);
    if (validate === null) return null;
    const named: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) named[name.toLowerCase()] = value;
    validate({ headers: named });
    return validate.errors && validate.errors.length > 0 ? [...validate.errors] : null;
  };
}
