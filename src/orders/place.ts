import { hash } from 'node:crypto';
import type { V2Order } from '../contract/types';
import { ApiError } from '../errors';
import { isRecord } from '../records';
import type { NewOrder, OrderRecord, PlaceOutcome, Store } from '../store';
import { toV2Order } from './v2-order';

/** placeOrder's reply: the placed order, at its address. */
export interface PlacedReply {
  status: 201;
  body: V2Order;
  headers: { Location: string };
}

/** How long a client may wait before sending a placement whose key is still in use again, in seconds. */
const IN_USE_RETRY_AFTER = '1';
const HOUR_MS = 60 * 60 * 1000;

/**
 * The placer of one version's `POST <ordersPath>`: a new pending order, placed exactly once per API
 * key and Idempotency-Key (Store.placeOrder), whose answer a retry gets again byte for byte (the
 * order's JSON, kept with the key, parsed and sent as it was); 422 for the key with another body;
 * 409 with Retry-After while the key's first placement runs. Keys are kept `keptHours`.
 */
export function orderPlacer(
  store: Store,
  options: { readonly ordersPath: string; readonly keptHours: number; readonly onPlacement?: (outcome: PlaceOutcome['outcome']) => void },
): (keyName: string | undefined, idempotencyKey: string, order: NewOrder) => Promise<PlacedReply> {
  return async (keyName, idempotencyKey, order) => {
    if (keyName === undefined) throw new Error('placeOrder is secured: a placement always has its API key');
    const outcome = await store.placeOrder({
      keyName,
      idempotencyKey,
      fingerprint: fingerprintOf(order),
      order,
      keptSince: new Date(Date.now() - options.keptHours * HOUR_MS).toISOString(),
      answer: placementAnswer,
    });
    options.onPlacement?.(outcome.outcome);
    switch (outcome.outcome) {
      case 'placed':
      case 'replayed': {
        const placed = orderOf(outcome.answer);
        return { status: 201, body: placed, headers: { Location: `${options.ordersPath}/${placed.id}` } };
      }
      case 'reused':
        throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with another request body');
      case 'in_use':
        throw new ApiError('idempotency_key_in_use', 'A placement with this Idempotency-Key is still running', {
          'Retry-After': IN_USE_RETRY_AFTER,
        });
    }
  };
}

/**
 * What identifies a placement's body: its three fields, whatever order or spacing the client sent
 * them in, so that a retry matches and any other order does not.
 */
export function fingerprintOf({ petId, quantity, shipDate }: NewOrder): string {
  return hash('sha256', JSON.stringify([petId, quantity, shipDate]), 'base64url');
}

/** The answer a placement keeps with its key: the placed order's JSON, sent again as it is to every retry. */
export function placementAnswer(placed: OrderRecord): string {
  return JSON.stringify(toV2Order(placed));
}

/** The order a kept answer holds: the JSON its placement wrote. */
function orderOf(answer: string): V2Order {
  const value: unknown = JSON.parse(answer);
  if (
    isRecord(value) &&
    typeof value.id === 'number' &&
    typeof value.petId === 'number' &&
    typeof value.quantity === 'number' &&
    typeof value.shipDate === 'string' &&
    typeof value.complete === 'boolean' &&
    (value.status === 'pending' || value.status === 'shipped')
  ) {
    const { id, petId, quantity, shipDate, complete, status } = value;
    return { id, petId, quantity, shipDate, complete, status };
  }
  throw new Error('a kept placement answer is not an order');
}
