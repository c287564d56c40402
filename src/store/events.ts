import type { MaybePromise } from '../maybe-promise';
import type { EventCounts, EventLog, EventPage, EventPosition, OrderEventRecord, OrderEventType, OrderStatus } from './types';
import { StoreInvariantError } from './errors';

// The change feed's parts that every store shares: the event rows' SQL, their mapping to records,
// the order of positions, and the signals that wake a waiting reader.

/**
 * The columns an event is written with, in this order: its type, its order's id, the order's
 * status and `complete` after the change (null for order.cancelled), and its time. The event's
 * order is the orders row (only its status and `complete` ever change) with these two, so the
 * event stays what it said.
 */
export const EVENT_WRITE_COLUMNS = 'type, order_id, status, complete, occurred_at';

/** Every write of events into `table`: `rows` is a VALUES list or a SELECT of EVENT_WRITE_COLUMNS. */
export function insertEventsSql(rows: string, table = 'order_events'): string {
  return `INSERT INTO ${table} (${EVENT_WRITE_COLUMNS}) ${rows}`;
}

/** The order.created event of each order a SELECT `FROM …` finds: `id` and `at` are its id's and its time's expressions. */
export function createdEventsSql(id: string, at: string, from: string, table?: string): string {
  return insertEventsSql(`SELECT 'order.created', ${id}, status, complete, ${at} ${from}`, table);
}

/**
 * An event row as the stores read it, in array mode: position, type, order id, time, the status it
 * left (null for order.cancelled), then the order's unchanging columns and the `complete` it left
 * (null for order.cancelled).
 */
export type EventRow = [
  tx: string,
  seq: number,
  type: OrderEventType,
  orderId: number,
  occurredAt: string,
  status: OrderStatus | null,
  petId: number | null,
  quantity: number | null,
  shipDate: string | null,
  complete: number | boolean | null,
];

/** The columns of an EventRow after its position, from `order_events e` left-joined to `orders o`. */
export const EVENT_COLUMNS = 'e.type, e.order_id, e.occurred_at, e.status, o.pet_id, o.quantity, o.ship_date, e.complete';

/** The join of an event to its order; order.cancelled has none to show. */
export const EVENT_JOIN = 'order_events e LEFT JOIN orders o ON o.id = e.order_id AND e.status IS NOT NULL';

/** The one mapping from an event row to the feed's record. */
export function eventRowToRecord([
  tx,
  seq,
  type,
  orderId,
  occurredAt,
  status,
  petId,
  quantity,
  shipDate,
  complete,
]: EventRow): OrderEventRecord {
  const position = { tx: String(tx), seq };
  if (status === null) return { position, type, orderId, occurredAt };
  if (petId === null || quantity === null || shipDate === null || complete === null) {
    throw new StoreInvariantError(`event ${seq} is of order ${orderId}, which the store does not have`);
  }
  const order = { id: orderId, petId, quantity, shipDate, complete: complete === 1 || complete === true, status };
  return { position, type, orderId, occurredAt, order };
}

/** Negative, zero or positive as `a` comes before, at or after `b` in the feed. */
export function comparePositions(a: EventPosition, b: EventPosition): number {
  const tx = BigInt(a.tx) - BigInt(b.tx);
  if (tx !== 0n) return tx < 0n ? -1 : 1;
  return a.seq - b.seq;
}

/** The later of two positions. */
export function laterPosition(a: EventPosition, b: EventPosition): EventPosition {
  return comparePositions(a, b) >= 0 ? a : b;
}

/** Events removed by one statement of a prune, so that no transaction of it holds locks for long. */
export const PRUNE_BATCH = 10_000;

/** Runs `batch` (one transaction removing up to PRUNE_BATCH events) until it removes none; answers how many in all. */
export async function pruneInBatches(batch: () => Promise<number>): Promise<number> {
  let removed = 0;
  for (let last = await batch(); last > 0; last = await batch()) removed += last;
  return removed;
}

/**
 * A store's change feed, as each dialect's feed.ts makes it: its reads and prune, and who hears of
 * events: listeners of this process's commits, and watchers of anyone's. The store calls
 * `committed` after each commit that wrote events; `watchOutside` starts watching other processes
 * (and returns how to stop) only while someone watches, and calls `changed` when another may have
 * committed.
 */
export abstract class StoreFeed implements EventLog {
  private readonly written = new Set<(counts: EventCounts) => void>();
  private readonly watchers = new Set<() => void>();
  private stopOutside: (() => void) | undefined;
  /** The name this process's commits are announced under to others (Store.announcesAs); none where commits are not announced. */
  readonly announcesAs: string | undefined = undefined;

  abstract readEvents(after: EventPosition | 'oldest', limit: number): MaybePromise<EventPage>;
  abstract latestEventPosition(): MaybePromise<EventPosition>;
  abstract pruneEvents(before: string): Promise<number>;
  /** Starts watching other processes' commits, calling `changed` on each; answers how to stop. */
  protected abstract watchOutside(changed: () => void): () => void;

  /**
   * Takes every commit the outside watch could see now as seen, so that it does not call `changed`
   * for them. Nothing to do where each commit signals once by itself.
   */
  protected seenOutside(): void {}

  /** This process committed these events. */
  committed(counts: EventCounts): void {
    for (const listener of this.written) listener(counts);
    this.toldOfCommit();
  }

  /**
   * Events were committed, and this process knows at once: it made the commit, or another process
   * that shares the store said so (the server tells its delivery thread). What the outside watch
   * can see now is taken as seen, so that the same commit does not wake the watchers a second
   * time; then they are woken.
   */
  toldOfCommit(): void {
    if (this.stopOutside !== undefined) this.seenOutside();
    this.changed();
  }

  /** Events may have committed somewhere. */
  changed(): void {
    for (const watcher of [...this.watchers]) watcher();
  }

  onEventsWritten(listener: (counts: EventCounts) => void): () => void {
    this.written.add(listener);
    return () => void this.written.delete(listener);
  }

  watchEvents(watcher: () => void): () => void {
    this.watchers.add(watcher);
    if (this.stopOutside === undefined) this.stopOutside = this.watchOutside(() => this.changed());
    return () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0) this.stopWatching();
    };
  }

  /** Stops watching other processes; for the store's close. */
  stopWatching(): void {
    this.stopOutside?.();
    this.stopOutside = undefined;
  }
}
