import type { ErrorObject, ValidateFunction } from 'ajv';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { perOperationAndStatus, statusMatch } from './by-status';

/** A reply body's errors against the schema its operation declares for its status, or null when it has none. */
export type ResponseBodyValidator = (body: unknown, operation: Operation<OpenAPIV3.Document>, status: number) => ErrorObject[] | null;

/**
 * openapi-backend's `validateResponse` for a reply of a known status, step for step: the status's
 * validator found as the library finds it (the status, else its `2XX` range, else `default`), the
 * same errors in the same order (tests/openapi/response-body.test.ts compares the two over every
 * operation and status of the documents). What it leaves out is per-reply overhead: finding the
 * status's validator again by the operation's id, the result object, and lodash's test of its
 * errors. openapi-backend is pinned exactly, and the test fails if a release checks differently.
 */
export function compileResponseBodyValidator(api: OpenAPIBackend<OpenAPIV3.Document>): ResponseBodyValidator {
  const validatorOf = perOperationAndStatus((operation: Operation<OpenAPIV3.Document>, status: number): ValidateFunction | null => {
    const { operationId } = operation;
    if (operationId === undefined) throw new Error('Unknown operation');
    // The library's map for the operation: null when none of its responses declares a body.
    const byStatus: Readonly<Record<string, ValidateFunction>> | null =
      api.validator.getStatusBasedResponseValidatorForOperation(operationId);
    return (byStatus === null ? undefined : statusMatch(status, byStatus)) ?? null;
  });

  return (body, operation, status) => {
    const validate = validatorOf(operation, status);
    if (validate === null) return null;
    validate(body);
    return validate.errors && validate.errors.length > 0 ? [...validate.errors] : null;
  };
}
