import type { OperationId, operations } from '../contract/types';
import { ApiError } from '../errors';
import type { Store } from '../store';
import { ifNoneMatchMatches } from './conditional';
import type { SuccessReply } from './reply';

/** Operation K's parameters in one location, typed by the generated types; none is an empty object. */
type ParametersIn<K extends OperationId, In extends 'path' | 'query' | 'header'> = [NonNullable<operations[K]['parameters'][In]>] extends [
  never,
]
  ? Readonly<Record<never, never>>
  : Readonly<NonNullable<operations[K]['parameters'][In]>>;

/** Operation K's JSON request body, typed by the generated types; undefined when it declares none. */
type RequestBodyOf<K extends OperationId> = operations[K]['requestBody'] extends { content: { 'application/json': infer B } }
  ? B
  : undefined;

/**
 * What the handler of operation K gets: its inputs typed from the generated `operations[K]`,
 * validated and converted (an int64 id is a safe-integer number, a boolean a boolean), never
 * express's req or res, and never a string to parse.
 */
export interface HandlerContext<K extends OperationId> {
  readonly path: ParametersIn<K, 'path'>;
  readonly query: ParametersIn<K, 'query'>;
  /** The headers the operation declares, by the names the document gives them. */
  readonly headers: ParametersIn<K, 'header'>;
  /** The request body, parsed and validated against the operation's schema. */
  readonly body: RequestBodyOf<K>;
  /** The name of the API key that authenticated the request. */
  readonly keyName: string;
}

/** A handler for operation K: returns one of its declared 2xx replies, or throws an ApiError. */
export type OperationHandler<K extends OperationId> = (context: HandlerContext<K>) => Promise<SuccessReply<K>>;

/** One handler per operation in the spec; a spec operation without one fails the typecheck. */
export type OperationHandlers = { readonly [K in OperationId]: OperationHandler<K> };

/** The operation handlers, translating HTTP to store calls and back; lists stream in chunks of `listChunkItems`. */
export function createHandlers(store: Store, listChunkItems = 1000): OperationHandlers {
  return {
    listOrders: async ({ headers }) => {
      const etag = await store.listEtag();
      if (ifNoneMatchMatches(headers['If-None-Match'], etag)) return { status: 304, headers: { ETag: etag } };
      const snapshot = await store.snapshotOrders(listChunkItems);
      return { status: 200, stream: snapshot, headers: { ETag: snapshot.etag } };
    },

    cancelOrder: async ({ path }) => {
      const id = path.orderId;
      const outcome = await store.cancelOrder(id);
      switch (outcome) {
        case 'cancelled':
          return { status: 204 };
        case 'shipped':
          throw new ApiError('order_already_shipped', `Order ${id} has already shipped and cannot be cancelled`);
        case 'not_found':
          throw new ApiError('order_not_found', `Order ${id} was not found`);
      }
    },

    getPetById: async ({ path }) => {
      const id = path.petId;
      if (!(await store.petExists(id))) throw new ApiError('pet_not_found', `Pet ${id} was not found`);
      return { status: 200, body: { id } };
    },
  } satisfies OperationHandlers;
}
