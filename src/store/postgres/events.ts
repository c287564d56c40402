import pg from 'pg';
import type { Logger } from '../../logger';
import { EVENT_COLUMNS, EVENT_JOIN, PRUNE_BATCH } from '../events';

/** The channel on which instances tell each other that events have committed. */
export const EVENTS_CHANNEL = 'petstore_order_events';

/**
 * Why the feed never skips an event on PostgreSQL. Each event takes its seq from a sequence when it
 * is written, but transactions commit in any order: one that took seq 11 can commit after one that
 * took 12, and a reader that had already read past 12 would never see 11. So each event also
 * records its transaction's id (`xid`, xid8, from pg_current_xact_id()), the feed is ordered by
 * (xid, seq), and a reader sees only the events of transactions older than the oldest one still
 * running: `pg_snapshot_xmin(pg_current_snapshot())`. Every transaction below that has ended, so no
 * event can ever appear below a position a reader has passed: the set a reader sees only grows at
 * its end. The cost is that a long transaction holds back every later event until it ends (an
 * import's, or any other on the cluster that writes); the events then arrive, in order.
 *
 * The other way, writers taking an advisory lock so that they commit in seq order, serializes every
 * cancel and would make each wait for an import's whole transaction (docs/performance-log.md
 * measured both on cancels).
 */
const SETTLED = 'e.xid < pg_snapshot_xmin(pg_current_snapshot())';

/** The change feed's statements on PostgreSQL. */
export const EVENTS_SQL = {
  /**
   * The last event pruned, whether events after (`$1`, `$2`) have committed but are not settled yet
   * (held back by an older transaction still running), then up to `$3` events after (`$1`, `$2`)
   * that every reader can see, in one snapshot: one row of the mark with nulls when there is no event.
   *
   * An event not settled yet has an xid at or above the horizon, and every such event lies after
   * any position a reader holds: a reader only ever holds positions below the horizon it read at,
   * and the horizon never moves back. So "held back" is whether the newest event's xid reaches the
   * horizon: max() reads the last entry of the index, whatever the planner knows of the table (a
   * test of each event from the position on, before the table's first ANALYZE, was planned as a
   * scan of every event, on every page).
   */
  read: `SELECT m.events_pruned_xid::text, m.events_pruned_seq,
      coalesce((SELECT max(h.xid) FROM order_events h) >= pg_snapshot_xmin(pg_current_snapshot()), false),
      page.*
    FROM store_meta m LEFT JOIN LATERAL (
      SELECT e.xid::text, e.seq, ${EVENT_COLUMNS} FROM ${EVENT_JOIN}
      WHERE (e.xid, e.seq) > ($1::xid8, $2::bigint) AND ${SETTLED}
      ORDER BY e.xid, e.seq LIMIT $3
    ) page ON TRUE`,
  /** The last event pruned, and the last event every reader can see (nulls when there is none). */
  latest: `SELECT m.events_pruned_xid::text AS pruned_tx, m.events_pruned_seq AS pruned_seq, last.xid::text AS tx, last.seq
    FROM store_meta m LEFT JOIN LATERAL (
      SELECT e.xid, e.seq FROM order_events e WHERE ${SETTLED} ORDER BY e.xid DESC, e.seq DESC LIMIT 1
    ) last ON TRUE`,
  /**
   * Removes up to PRUNE_BATCH of the oldest events that every reader can see, all before the first
   * event at or after `$1` (a time), and marks the last one removed; answers how many it removed.
   */
  prune: `WITH kept AS (
      SELECT e.xid, e.seq FROM order_events e WHERE e.occurred_at >= $1 ORDER BY e.xid, e.seq LIMIT 1
    ), doomed AS (
      SELECT e.xid, e.seq FROM order_events e
      WHERE ${SETTLED} AND (NOT EXISTS (SELECT 1 FROM kept) OR (e.xid, e.seq) < (SELECT xid, seq FROM kept))
      ORDER BY e.xid, e.seq LIMIT ${PRUNE_BATCH}
    ), deleted AS (
      DELETE FROM order_events e USING doomed d WHERE e.xid = d.xid AND e.seq = d.seq RETURNING e.xid, e.seq
    ), last AS (
      SELECT xid, seq FROM deleted ORDER BY xid DESC, seq DESC LIMIT 1
    ), marked AS (
      UPDATE store_meta m SET events_pruned_xid = last.xid, events_pruned_seq = last.seq FROM last
      WHERE (last.xid, last.seq) > (m.events_pruned_xid, m.events_pruned_seq)
    )
    SELECT count(*)::int AS removed FROM deleted`,
} as const;

/**
 * Watches other instances' events: a connection of its own (never one of the pool's) that LISTENs
 * on EVENTS_CHANNEL, made again a moment after it is lost, and a slow poll of the feed's head for
 * what no NOTIFY announces (a transaction elsewhere that held the feed back, a lost connection).
 * A NOTIFY whose payload is `ownName` came from this process, which woke its watchers when it
 * committed: it wakes nobody again. Returns how to stop.
 */
export function listenForEvents(
  url: string,
  logger: Logger,
  changed: () => void,
  head: () => Promise<string>,
  ownName: string,
): () => void {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** Lets the listening connection go, whatever it does after. */
  const hangUp = (): void => {
    const listening = client;
    client = undefined;
    if (listening === undefined) return;
    listening.removeAllListeners();
    listening.on('error', () => undefined);
    void listening.end().catch(() => undefined);
  };
  const connect = (): void => {
    const listener = new pg.Client({ connectionString: url, application_name: 'petstore-orders events' });
    client = listener;
    const lost = (err?: unknown): void => {
      if (client !== listener) return;
      hangUp();
      if (stopped) return;
      if (err !== undefined) logger.warn({ err }, 'lost the connection that listens for other instances’ events; making a new one');
      retry = setTimeout(connect, RELISTEN_MS);
      retry.unref();
    };
    listener.on('error', lost);
    listener.on('end', () => lost());
    listener.on('notification', ({ payload }) => payload !== ownName && changed());
    listener
      .connect()
      .then(() => listener.query(`LISTEN ${EVENTS_CHANNEL}`))
      .then(
        // Events may have committed while it was not listening.
        () => changed(),
        (err: unknown) => lost(err),
      );
  };
  connect();
  let last: string | undefined;
  const poll = setInterval(() => {
    head().then(
      (now) => {
        if (last !== undefined && now !== last) changed();
        last = now;
      },
      () => undefined,
    );
  }, POLL_MS);
  poll.unref();
  return () => {
    stopped = true;
    clearInterval(poll);
    clearTimeout(retry);
    hangUp();
  };
}

/** How often (ms) the head is polled while someone waits. */
const POLL_MS = 1000;
/** How long (ms) after losing its LISTEN connection a new one is made. */
const RELISTEN_MS = 1000;
