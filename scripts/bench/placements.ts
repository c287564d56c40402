// What the placement rows of the bench share, on either store.
import { fingerprintOf } from '../../src/orders/place';
import type { Store } from '../../src/store';

/** The order every placement of the bench places. */
export const NEW_ORDER = { petId: 7, quantity: 1, shipDate: '2026-12-24T10:00:00Z' };
/** Its request body. */
export const NEW_ORDER_BODY = JSON.stringify(NEW_ORDER);
/** The Idempotency-Key the replay rows send again and again: placed before the run, so that every request is a replay. */
export const REPLAYED_KEY = 'bench-replayed';
/** What the bench's own key may do: read, cancel, and place. */
export const BENCH_SCOPES = ['orders:read', 'orders:cancel', 'orders:place'];

/** Places NEW_ORDER under REPLAYED_KEY for the API key `keyName`, as the server would, so that the replay rows only replay. */
export async function placeReplayed(store: Store, keyName: string): Promise<void> {
  await store.placeOrder({
    keyName,
    idempotencyKey: REPLAYED_KEY,
    fingerprint: fingerprintOf(NEW_ORDER),
    order: NEW_ORDER,
    keptSince: new Date(0).toISOString(),
  });
}
