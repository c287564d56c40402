import { EVENT_COLUMNS, EVENT_JOIN, PRUNE_BATCH } from '../events';
import { storeSql } from '../sql';

/**
 * The orders every read and write of the SQLite store sees: not those of an import still being
 * published a slice at a time (./import.ts), the orders between its first and last id. Each bound
 * is read once per statement, in the statement's own snapshot; when nothing is being published the
 * range is empty (from 1 to 0). The SQLite store's `visible` condition in every shared statement.
 */
export const PUBLISHED = [
  'id NOT BETWEEN (SELECT coalesce(min(from_id), 1) FROM import_publishing) AND (SELECT coalesce(min(to_id), 0) FROM import_publishing)',
];

/** The shared statements (../sql.ts) on the orders the SQLite store shows: its writer's and its readers'. */
export const SQL = storeSql(PUBLISHED);

/**
 * The list, for a read transaction that has seen no import being published (PUBLISHING_SQL
 * found no row): in that snapshot PUBLISHED holds for every order, so the list reads the orders
 * without testing each against the import's range.
 */
export const LIST_ALL_SQL = storeSql().snapshot;

/** Whether an import is being published a slice at a time, in the reading transaction's snapshot: a row, or none. */
export const PUBLISHING_SQL = 'SELECT 1 FROM import_publishing LIMIT 1';

/** The list statement for a read transaction under way: LIST_ALL_SQL's when its snapshot has no import being published. */
export function listFor<S>(statements: { readonly publishing: { get(): unknown }; readonly list: S; readonly listAll: S }): S {
  return statements.publishing.get() === undefined ? statements.listAll : statements.list;
}

/**
 * The first event the feed may not show yet: while an import publishes in slices, its events are
 * written with each slice, and every event from its first on (a cancel's meanwhile included) waits
 * until the import shows its orders, so that no reader passes an event that is still to appear.
 * Otherwise the one writer commits events in seq order, and every committed event may be read.
 */
const HELD_BACK = `coalesce((SELECT min(events_from) FROM import_publishing), ${Number.MAX_SAFE_INTEGER})`;

/** The change feed's statements on SQLite, in seq order. */
export const EVENTS_SQL = {
  /** The last event a prune removed (0: none). */
  pruned: 'SELECT events_pruned_seq FROM store_meta',
  /** Up to `$2` events after seq `$1`, as EventRows. */
  read: `SELECT '0', e.seq, ${EVENT_COLUMNS} FROM ${EVENT_JOIN} WHERE e.seq > $1 AND e.seq < ${HELD_BACK} ORDER BY e.seq LIMIT $2`,
  /** The last event the feed may show, or the last one pruned. */
  latest: `SELECT max(coalesce((SELECT max(seq) FROM order_events WHERE seq < ${HELD_BACK}), 0), events_pruned_seq) FROM store_meta`,
  /** What changes when anyone commits an event, or shows held-back ones: for the poll that watches other processes. */
  head: `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'order_events'), 0) || '/' || ${HELD_BACK}`,
  /** The first event at or after `$1` (a time), which a prune keeps with every later one. */
  firstKept: 'SELECT seq FROM order_events WHERE occurred_at >= $1 ORDER BY seq LIMIT 1',
  /** The last of the (up to PRUNE_BATCH) oldest events before seq `$1` that the feed has shown. */
  pruneUpTo: `SELECT max(seq) FROM (SELECT seq FROM order_events WHERE seq < min($1, ${HELD_BACK}) ORDER BY seq LIMIT ${PRUNE_BATCH})`,
  prune: 'DELETE FROM order_events WHERE seq <= $1',
  markPruned: 'UPDATE store_meta SET events_pruned_seq = max(events_pruned_seq, $1)',
} as const;

/**
 * The id a placement gives its order: above every order's, and above the span of an import being
 * published (whose orders are not all in the table yet), so that no import's order can take it.
 */
export const NEXT_PLACED_ID_SQL =
  'SELECT max(coalesce((SELECT max(id) FROM orders), 0), coalesce((SELECT max(to_id) FROM import_publishing), 0)) + 1';
