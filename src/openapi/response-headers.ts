import type { ErrorObject, ValidateFunction } from 'ajv';
import { SetMatchType, type OpenAPIBackend, type Operation } from 'openapi-backend';
import OpenAPIUtils from 'openapi-backend/utils';
import type { OpenAPIV3 } from 'openapi-types';

/** A reply's headers' errors against what its operation declares for its status, or null when it has none. */
export type ResponseHeadersValidator = (
  headers: Readonly<Record<string, string>>,
  operation: Operation<OpenAPIV3.Document>,
  status: number,
) => ErrorObject[] | null;

/** The header validators of one status of an operation, as openapi-backend builds them: one per set match type. */
type ValidatorsBySetMatch = Readonly<Partial<Record<SetMatchType, ValidateFunction>>>;

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
  const found = new Map<string, ValidateFunction | null>();
  const validatorOf = (operationId: string, status: number): ValidateFunction | null => {
    const key = `${operationId} ${status}`;
    const known = found.get(key);
    if (known !== undefined) return known;
    // The library's map for the operation: null when none of its responses declares a header.
    const byStatus = api.validator.getResponseHeadersValidatorForOperation(operationId) as ReturnType<
      typeof api.validator.getResponseHeadersValidatorForOperation
    > | null;
    // The library types what it finds as `any`: the validators of the status's response, by set match type.
    const match = byStatus === null ? undefined : (OpenAPIUtils.findStatusCodeMatch(status, byStatus) as ValidatorsBySetMatch | undefined);
    const validate = match?.[SetMatchType.Any] ?? null;
    found.set(key, validate);
    return validate;
  };

  return (headers, operation, status) => {
    const { operationId } = operation;
    if (operationId === undefined) throw new Error('Unknown operation');
    const validate = validatorOf(operationId, status);
    if (validate === null) return null;
    const named: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) named[name.toLowerCase()] = value;
    validate({ headers: named });
    return validate.errors && validate.errors.length > 0 ? [...validate.errors] : null;
  };
}
