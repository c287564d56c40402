import type { V2Order } from '../contract/types';
import { ApiError } from '../errors';
import type { Placed } from '../orders/place';
import type { Shipped } from '../orders/ship';
import type { CancelOutcome } from '../store';

// What each order operation's outcome answers over HTTP, for every version that offers it: the
// domain (src/orders, the store) says what happened, and only this file says how the API replies.

/** How long a client may wait before sending a placement whose key is still in use again, in seconds. */
const IN_USE_RETRY_AFTER = '1';

/** A cancel's reply: 204 once the order is cancelled; 409 for a shipped order, 404 for an unknown or cancelled one. */
export function cancelReply(id: number, outcome: CancelOutcome): { status: 204 } {
  switch (outcome) {
    case 'cancelled':
      return { status: 204 };
    case 'shipped':
      throw new ApiError('order_already_shipped', `Order ${id} has already shipped and cannot be cancelled`);
    case 'not_found':
      throw notFound(id);
  }
}

/** A ship's reply: 200 with the shipped order; 409 for one already shipped, 404 for an unknown or cancelled one. */
export function shipReply(id: number, shipped: Shipped): { status: 200; body: V2Order } {
  switch (shipped.outcome) {
    case 'shipped':
      return { status: 200, body: shipped.order };
    case 'already_shipped':
      throw new ApiError('order_already_shipped', `Order ${id} has already shipped`);
    case 'cancelled':
    case 'not_found':
      throw notFound(id);
  }
}

/**
 * A placement's reply: 201 with the placed order at its address, the first placement's again for a
 * retry; 422 for the key with another body; 409 with Retry-After while the key's first placement runs.
 */
export function placeReply(ordersPath: string, placed: Placed): { status: 201; body: V2Order; headers: { Location: string } } {
  switch (placed.outcome) {
    case 'placed':
    case 'replayed':
      return { status: 201, body: placed.order, headers: { Location: `${ordersPath}/${placed.order.id}` } };
    case 'reused':
      throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with another request body');
    case 'in_use':
      throw new ApiError('idempotency_key_in_use', 'A placement with this Idempotency-Key is still running', {
        'Retry-After': IN_USE_RETRY_AFTER,
      });
  }
}

/** The 404 of an order that is unknown or cancelled: gone for clients, as from every list. */
export function notFound(id: number): ApiError {
  return new ApiError('order_not_found', `Order ${id} was not found`);
}
