import type { OperationId } from '../contract/types';
import { ApiError } from '../errors';
import { idProblem, parseId } from '../ids';
import type { Store } from '../store';
import { ifNoneMatchMatches } from './conditional';
import type { SuccessReply } from './reply';

/** What an operation handler gets: plain values, never express's req or res. */
export interface HandlerContext {
  /** Raw path parameters, percent-decoded but not coerced. */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** Request headers, names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The request body, parsed and validated against the operation's schema; undefined when it declares none. */
  readonly body: unknown;
  /** The name of the API key that authenticated the request. */
  readonly keyName: string;
}

/** A handler for operation K: returns one of its declared 2xx replies, or throws an ApiError. */
export type OperationHandler<K extends OperationId> = (context: HandlerContext) => Promise<SuccessReply<K>>;

/** One handler per operation in the spec; a spec operation without one fails the typecheck. */
export type OperationHandlers = { readonly [K in OperationId]: OperationHandler<K> };

/** The operation handlers, translating HTTP to store calls and back; lists stream in chunks of `listChunkItems`. */
export function createHandlers(store: Store, listChunkItems = 1000): OperationHandlers {
  return {
    listOrders: async ({ headers }) => {
      const etag = await store.listEtag();
      if (ifNoneMatchMatches(headers['if-none-match'], etag)) return { status: 304, headers: { ETag: etag } };
      const snapshot = await store.snapshotOrders(listChunkItems);
      return { status: 200, stream: snapshot, headers: { ETag: snapshot.etag } };
    },

    cancelOrder: async ({ params }) => {
      const id = idParam(params, 'orderId');
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

    getPetById: async ({ params }) => {
      const id = idParam(params, 'petId');
      if (!(await store.petExists(id))) throw new ApiError('pet_not_found', `Pet ${id} was not found`);
      return { status: 200, body: { id } };
    },
  } satisfies OperationHandlers;
}

/** Reads an id path parameter strictly; anything but a plain decimal safe integer is a 400. */
function idParam(params: HandlerContext['params'], name: string): number {
  const raw = params[name];
  const id = raw === undefined ? undefined : parseId(raw);
  if (id === undefined) throw new ApiError('invalid_request', idProblem(name, raw ?? ''));
  return id;
}
