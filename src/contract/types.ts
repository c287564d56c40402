import type { components, operations, paths } from '../../generated/openapi';

export type { components, operations, paths };

/** An order as the v1 contract exposes it: exactly the spec's five fields. */
export type Order = components['schemas']['Order'];
/** The body of every non-2xx response. */
export type ErrorBody = components['schemas']['Error'];
/** The closed set of error codes, straight from the spec's enum. */
export type ErrorCode = ErrorBody['code'];
/** A pet as the deprecated getPetById exposes it. */
export type Pet = components['schemas']['Pet'];
/** Every operationId in the spec. */
export type OperationId = keyof operations;
