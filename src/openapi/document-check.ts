import type { ErrorObject } from 'ajv';
import type OpenAPIBackend from 'openapi-backend';
import { errorCode, errorMessage } from '../thrown';

/** A standalone Ajv validate function. */
type Check = ((document: unknown) => boolean) & { errors?: ErrorObject[] | null };

const PRECOMPILED = '../../generated/openapi-3.0-check.js';

/**
 * The check that a document is OpenAPI 3.0, as the build compiled it (scripts/precompile.mjs):
 * openapi-schema-validator's schema under its Ajv options, as standalone code. Undefined when the
 * code runs from source, unbuilt (ts-jest), where openapi-backend compiles its own.
 */
export function precompiledDocumentCheck(): Check | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(PRECOMPILED) as Check;
  } catch (err) {
    if (errorCode(err) === 'MODULE_NOT_FOUND' && errorMessage(err).includes('openapi-3.0-check')) {
      return undefined;
    }
    throw err;
  }
}

/**
 * Has a backend check its document with the precompiled check instead of compiling
 * openapi-schema-validator's schema at every start-up, a large share of a start's time. The
 * verdict and the error are openapi-backend's own: the same schema, the same Ajv options, the same
 * message (tests/openapi/document-check.test.ts compares them). openapi-backend has no option for this, so
 * it replaces the instance's `validateDefinition`, which `init` calls; openapi-backend is pinned
 * exactly for such seams.
 */
export function usePrecompiledDocumentCheck(api: OpenAPIBackend): void {
  const check = precompiledDocumentCheck();
  if (check === undefined) return;
  api.validateDefinition = () => {
    if (!check(api.document)) {
      const errors = check.errors ?? [];
      throw new Error(`Document is not valid OpenAPI. ${errors.length} validation errors:\n${JSON.stringify(errors, null, 2)}`);
    }
    return api.document;
  };
}
