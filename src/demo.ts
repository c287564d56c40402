import { loadServedDocuments } from './contract/document';
import type { Policy } from './rate-policy';
import { scopesOf } from './contract/scopes';
import { generateKey, hashKey } from './keys';
import type { ImportRecord, KeyStore, OrderImport, OrderReads } from './store';

/** The orders a fresh demo store starts with: pending ones to cancel, and a shipped one that refuses. */
const DEMO_ORDERS: readonly ImportRecord[] = [
  { id: 1, petId: 101, quantity: 1, shipDate: '2026-12-01T09:30:00Z', complete: false },
  { id: 2, petId: 205, quantity: 3, shipDate: '2026-12-03T15:00:00Z', complete: false },
  { id: 3, petId: 101, quantity: 2, shipDate: '2026-11-20T08:00:00Z', complete: true, status: 'shipped' },
  { id: 4, petId: 317, quantity: 1, shipDate: '2026-12-10T12:00:00+01:00', complete: false },
  { id: 5, petId: 42, quantity: 5, shipDate: '2026-12-24T18:45:00Z', complete: false },
];

/**
 * The demo key's rate limit: high enough for every example of the README, low enough that its
 * answers carry the RateLimit fields the README shows.
 */
export const DEMO_POLICIES: readonly Policy[] = [
  { quota: 600, unit: 'min' },
  { quota: 100000, unit: 'day' },
];

/**
 * Sets up a demo store: demo orders when it has none, and a demo key when it has no key at all,
 * with every scope the documents declare, so that every example can run with it. Returns the new
 * key (to be shown once), or null, touching nothing, when the store already has keys.
 */
export async function seedDemo(store: KeyStore & OrderImport & Pick<OrderReads, 'hasOrders'>): Promise<string | null> {
  if ((await store.listKeys()).length > 0) return null;
  if (!(await store.hasOrders())) await store.importOrders(DEMO_ORDERS);
  const key = generateKey();
  await store.createKey('demo', hashKey(key), { scopes: scopesOf(loadServedDocuments()), policies: DEMO_POLICIES });
  return key;
}
