import { statement, type Steps } from './dialect';
import { StoreInvariantError } from './errors';
import { insertEventsSql } from './events';
import { BUMP_REVISION_SQL, statusSql, type StoreSql } from './sql';
import type { CancelOutcome, OrderEventType, OrderStatus, ShipOutcome } from './types';

// The move of a pending order to cancelled or shipped, as every store makes it: one conditional
// update, so that of concurrent moves of one order exactly one happens, with its event and the
// revision bump in the same transaction; otherwise the order's status says why not.

/** Where a move takes a pending order. */
export type MoveTo = 'cancelled' | 'shipped';

/** What a move found: whether it moved the order, and the order's status then (null: there is no such order). */
export interface Moved {
  readonly moved: boolean;
  readonly status: OrderStatus | null;
}

/** The event a move writes, and the `complete` it leaves (shipping fulfils the order; a cancelled order shows none). */
export const MOVE_EVENTS = {
  cancelled: { type: 'order.cancelled', complete: 'NULL' },
  shipped: { type: 'order.shipped', complete: 'TRUE' },
} as const satisfies Record<MoveTo, { type: OrderEventType; complete: string }>;

/** A move's event: `id` and `at` are the expressions of the order's id and the time, `from` what they are read from. */
function eventSql(to: MoveTo, id: string, at: string, from = ''): string {
  const { type, complete } = MOVE_EVENTS[to];
  return insertEventsSql(`SELECT '${type}', ${id}, ${to === 'cancelled' ? 'NULL' : `'${to}'`}, ${complete}, ${at}${from}`);
}

/** Each move's event, as moveSteps writes it: `$1` the order's id, `$2` the time. */
const MOVE_EVENT_SQL = { cancelled: eventSql('cancelled', '$1', '$2'), shipped: eventSql('shipped', '$1', '$2') };

/**
 * A move as steps, each statement on its own: for SQLite, where a statement costs no round trip and
 * the moves arriving together share one transaction (its group commit).
 */
export function* moveSteps(sql: StoreSql, to: MoveTo, id: number, at: string): Steps<Moved> {
  const moved = (yield { rows: statement(sql.moves[to], [at, id]) }) ?? [];
  if (moved.length === 0) {
    const [row] = (yield { rows: statement(sql.status, [id]) }) ?? [];
    return { moved: false, status: statusOf(row?.status) };
  }
  yield { writes: [statement(MOVE_EVENT_SQL[to], [id, at]), statement(BUMP_REVISION_SQL)] };
  return { moved: true, status: to };
}

/**
 * The same moves, each as one statement answering one row of `moved` (0 or 1) and `status`, with
 * `$1` the time and `$2` the id: for PostgreSQL, where each statement costs a round trip, and one
 * statement is its own transaction. Made once per store.
 */
export function moveStatements(sql: StoreSql): { readonly [To in MoveTo]: string } {
  const one = (to: MoveTo) => `WITH moved AS (${sql.moves[to]}),
       bumped AS (${BUMP_REVISION_SQL} WHERE EXISTS (SELECT 1 FROM moved)),
       evented AS (${eventSql(to, 'id', '$1', ' FROM moved')})
     SELECT (SELECT count(*) FROM moved)::int AS moved, (${statusSql([], '$2')}) AS status`;
  return { cancelled: one('cancelled'), shipped: one('shipped') };
}

/** A status as the store read it: one of the three an order can have, or null for no order. */
function statusOf(value: unknown): OrderStatus | null {
  if (value === undefined || value === null) return null;
  if (value === 'pending' || value === 'shipped' || value === 'cancelled') return value;
  throw new StoreInvariantError(`an order has the status ${JSON.stringify(value)}`);
}

/** What a cancel answers: a cancelled order is gone, as one that never existed. */
export function cancelOutcome({ moved, status }: Moved): CancelOutcome {
  if (moved) return 'cancelled';
  return status === 'shipped' ? 'shipped' : 'not_found';
}

/** What a ship answers, from the same two facts as cancelOutcome. */
export function shipOutcome({ moved, status }: Moved): ShipOutcome {
  if (moved) return 'shipped';
  if (status === 'shipped') return 'already_shipped';
  return status === 'cancelled' ? 'cancelled' : 'not_found';
}
