import type { components, operations, paths } from '../../generated/openapi';
import type * as V2 from '../../generated/openapi-v2';

export type { components, operations, paths };

/** An order as the v1 contract exposes it: exactly the spec's five fields. */
export type Order = components['schemas']['Order'];
/** The body of every non-2xx response. */
export type ErrorBody = components['schemas']['Error'];
/** The closed set of error codes, straight from the spec's enum. */
export type ErrorCode = ErrorBody['code'];
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
export type { VersionOperations } from '../../generated/versions';
import type { VersionOperations } from '../../generated/versions';
/** A version of the API: the prefix of its paths. */
export type ApiVersion = keyof VersionOperations;
/** Every operationId in version V's document. */
export type OperationIdOf<V extends ApiVersion> = keyof VersionOperations[V] & string;
