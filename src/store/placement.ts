import { instantKey } from '../date-time';
import { isRecord } from '../records';
import { statement, type Row, type Steps } from './dialect';
import { StoreInvariantError } from './errors';
import { insertEventsSql, PRUNE_BATCH } from './events';
import { BUMP_REVISION_SQL } from './sql';
import type { OrderRecord, PlaceOutcome, Placement } from './types';

// A placement, exactly once per API key and Idempotency-Key, as every store makes it. What differs
// is only how a store keeps a second placement of one key from running beside the first (its
// `claim`) and its transaction: see each store's placeOrder.

/** The statements of a placement and of its records' retention. */
export const PLACEMENT_SQL = {
  /** The answer kept for API key `$1` and Idempotency-Key `$2`, unless it was made before `$3`. */
  record: 'SELECT fingerprint, answer FROM idempotency_keys WHERE key_name = $1 AND idem_key = $2 AND created_at >= $3',
  /** The key's record of a placement, over an expired one: `$1` key name, `$2` Idempotency-Key, `$3` fingerprint, `$4` order, `$5` answer, `$6` time. */
  remember: `INSERT INTO idempotency_keys (key_name, idem_key, fingerprint, order_id, answer, created_at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (key_name, idem_key) DO UPDATE SET
      fingerprint = excluded.fingerprint, order_id = excluded.order_id, answer = excluded.answer, created_at = excluded.created_at`,
  /** Up to PRUNE_BATCH records made before `$1`, per statement. */
  prune: `DELETE FROM idempotency_keys WHERE (key_name, idem_key) IN (SELECT key_name, idem_key FROM idempotency_keys WHERE created_at < $1 LIMIT ${PRUNE_BATCH})`,
  /** A placed order: `$1` id, `$2` pet, `$3` quantity, `$4` ship date, `$5` ship instant, `$6` time. */
  order: `INSERT INTO orders (id, pet_id, quantity, ship_date, ship_at, created_at, complete, status)
    VALUES ($1, $2, $3, $4, $5, $6, FALSE, 'pending')`,
  /** A placed order's order.created event: `$1` its id, `$2` its time. */
  event: insertEventsSql(`VALUES ('order.created', $1, 'pending', FALSE, $2)`),
} as const;

/**
 * The id the next placed order takes: one above every order's and above every id in `reserved`
 * (SELECTs of one value each, or of NULL): ids a store has promised elsewhere.
 */
export function nextIdSql(reserved: readonly string[]): string {
  return `SELECT coalesce(max(id), 0) + 1 AS id FROM (${['SELECT max(id) AS id FROM orders', ...reserved].join(' UNION ALL ')}) AS bounds`;
}

/** What a kept record answers a placement without a write: its first answer, `reused`, or nothing kept. */
export function* keptSteps(placement: Placement): Steps<PlaceOutcome | undefined> {
  const [kept] = (yield { rows: recordOf(placement) }) ?? [];
  return kept === undefined ? undefined : keptOutcome(kept, placement.fingerprint);
}

/**
 * One placement, in the caller's transaction once it has claimed the key: the revision bumped first,
 * whose lock every write of orders takes (so the id read after it is above every committed order's),
 * and the key's record read again, for a placement of it that committed since; then the next id, and
 * the order, its event and the key's record in one step, with the order as the answer every retry gets. An outcome other
 * than `placed` has written nothing the caller may keep: it rolls back.
 */
export function* placementSteps(placement: Placement, at: string, sql: { readonly nextId: string }): Steps<PlaceOutcome> {
  const { keyName, idempotencyKey, fingerprint, order } = placement;
  const [kept] = (yield { writes: [statement(BUMP_REVISION_SQL)], then: recordOf(placement) }) ?? [];
  if (kept !== undefined) return keptOutcome(kept, fingerprint);
  const [next] = (yield { rows: statement(sql.nextId) }) ?? [];
  const id = Number(next?.id);
  if (!Number.isSafeInteger(id)) throw new StoreInvariantError('the next order id could not be read');
  const { petId, quantity, shipDate } = order;
  const record: OrderRecord = { id, petId, quantity, shipDate, complete: false, status: 'pending' };
  yield {
    writes: [
      statement(PLACEMENT_SQL.order, [id, petId, quantity, shipDate, instantKey(shipDate), at]),
      statement(PLACEMENT_SQL.event, [id, at]),
      statement(PLACEMENT_SQL.remember, [keyName, idempotencyKey, fingerprint, id, JSON.stringify(record), at]),
    ],
  };
  return { outcome: 'placed', order: record };
}

const recordOf = ({ keyName, idempotencyKey, keptSince }: Placement) =>
  statement(PLACEMENT_SQL.record, [keyName, idempotencyKey, keptSince]);

/** What a kept record says to a placement with `fingerprint`: its order again, or that the key was used with another body. */
function keptOutcome({ fingerprint, answer }: Row, given: string): PlaceOutcome {
  if (fingerprint !== given) return { outcome: 'reused' };
  if (typeof answer !== 'string') throw new StoreInvariantError('a kept placement has no answer');
  return { outcome: 'replayed', order: keptOrder(JSON.parse(answer)) };
}

/** The order a kept answer holds: the pending order its placement made, as it was then. */
function keptOrder(value: unknown): OrderRecord {
  if (
    isRecord(value) &&
    typeof value.id === 'number' &&
    typeof value.petId === 'number' &&
    typeof value.quantity === 'number' &&
    typeof value.shipDate === 'string' &&
    typeof value.complete === 'boolean' &&
    value.status === 'pending'
  ) {
    const { id, petId, quantity, shipDate, complete } = value;
    return { id, petId, quantity, shipDate, complete, status: 'pending' };
  }
  throw new StoreInvariantError('a kept placement answer is not an order');
}
