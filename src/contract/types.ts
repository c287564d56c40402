import type { components, operations, paths } from '../../generated/openapi';
import type * as V2 from '../../generated/openapi-v2';

export type { components, operations, paths };

/** An order as the v1 contract exposes it: exactly the spec's five fields. */
export type Order = components['schemas']['Order'];
/**
 * Every error code the server knows: the codes each version's document lists (v1's and v2's
 * closed sets, v3's open one), as `npm run generate` reads them.
 */
export type ErrorCode = VersionErrorCodes[ApiVersion];
/** The body of every non-2xx response, in every version: v1's `Error`, with any version's code. */
export type ErrorBody = Omit<components['schemas']['Error'], 'code'> & { code: ErrorCode };
/** A pet as the deprecated getPetById exposes it. */
export type Pet = components['schemas']['Pet'];
/** Every operationId in the v1 document. */
export type OperationId = keyof operations;

/** An order as the v2 contract exposes it: v1's five fields and its status. */
export type V2Order = V2.components['schemas']['Order'];
export type V2OrderEvent = V2.components['schemas']['OrderEvent'];
/** One page of v2's order list. */
export type V2OrderPage = V2.components['schemas']['OrderPage'];

/** The operations of each version's document (spec/documents.json), as `npm run generate` lists them. */
export type { VersionErrorCodes, VersionOperations } from '../../generated/versions';
import type { VersionErrorCodes, VersionOperations } from '../../generated/versions';
/** A version of the API: the prefix of its paths. */
export type ApiVersion = keyof VersionOperations;
/** Every operationId in version V's document. */
export type OperationIdOf<V extends ApiVersion> = keyof VersionOperations[V] & string;
