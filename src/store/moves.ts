import { statement, type Statement, type Steps } from './dialect';
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

/**
 * A move as steps, each statement on its own: for SQLite, where a statement costs no round trip and
 * the moves arriving together share one transaction (its group commit).
 */
export function* moveSteps(sql: StoreSql, to: MoveTo, id: number, at: string): Steps<Moved> {
  const moved = (yield { rows: statement(`${sql[to === 'cancelled' ? 'cancel' : 'ship']} RETURNING id`, [at, id]) }) ?? [];
  if (moved.length === 0) {
    const [row] = (yield { rows: statement(sql.status, [id]) }) ?? [];
    return { moved: false, status: (row?.status as OrderStatus | undefined) ?? null };
  }
  yield { writes: [statement(eventSql(to, '$1', '$2'), [id, at]), statement(BUMP_REVISION_SQL)] };
  return { moved: true, status: to };
}

/**
 * The same move as one statement, answering one row of `moved` (0 or 1) and `status`: for
 * PostgreSQL, where each statement costs a round trip, and one statement is its own transaction.
 */
export function moveStatement(sql: StoreSql, to: MoveTo, id: number, at: string): Statement {
  return statement(
    `WITH moved AS (${sql[to === 'cancelled' ? 'cancel' : 'ship']} RETURNING id),
       bumped AS (${BUMP_REVISION_SQL} WHERE EXISTS (SELECT 1 FROM moved)),
       evented AS (${eventSql(to, 'id', '$1', ' FROM moved')})
     SELECT (SELECT count(*) FROM moved)::int AS moved, (${statusSql([], '$2')}) AS status`,
    [at, id],
  );
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
