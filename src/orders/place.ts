import { hash } from 'node:crypto';
import type { V2Order } from '../contract/types';
import type { NewOrder, PlaceOutcome, Placements } from '../store';
import { toV2Order } from './v2-order';

const HOUR_MS = 60 * 60 * 1000;

/** What a placement found, with the order as the API shows it: a retry gets the first placement's order again. */
export type Placed =
  | { readonly outcome: 'placed' | 'replayed'; readonly order: V2Order }
  | { readonly outcome: Exclude<PlaceOutcome['outcome'], 'placed' | 'replayed'> };

/**
 * The placer of new pending orders: each placed exactly once per API key and Idempotency-Key
 * (Store.placeOrder), whose keys are kept `keptHours`.
 */
export function orderPlacer(
  store: Placements,
  keptHours: number,
): (keyName: string, idempotencyKey: string, order: NewOrder) => Promise<Placed> {
  return async (keyName, idempotencyKey, order) => {
    const placed = await store.placeOrder({
      keyName,
      idempotencyKey,
      fingerprint: fingerprintOf(order),
      order,
      keptSince: new Date(Date.now() - keptHours * HOUR_MS).toISOString(),
    });
    return placed.outcome === 'placed' || placed.outcome === 'replayed'
      ? { outcome: placed.outcome, order: toV2Order(placed.order) }
      : placed;
  };
}

/**
 * What identifies a placement's body: its three fields, whatever order or spacing the client sent
 * them in, so that a retry matches and any other order does not.
 */
export function fingerprintOf({ petId, quantity, shipDate }: NewOrder): string {
  return hash('sha256', JSON.stringify([petId, quantity, shipDate]), 'base64url');
}
