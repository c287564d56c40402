import type pg from 'pg';
import type { Logger } from '../../logger';
import { EventsExpiredError, StoreInvariantError } from '../errors';
import { StoreFeed, comparePositions, eventRowToRecord, laterPosition, pruneInBatches, type EventRow } from '../events';
import type { EventCounts, EventPage, EventPosition } from '../types';
import { guard } from './dialect';
import { EVENTS_CHANNEL, EVENTS_SQL, listenForEvents } from './events';

/** A row of EVENTS_SQL.read: the prune's mark, then an event, or nulls when there is none. */
type ReadRow = [prunedTx: string, prunedSeq: number, heldBack: boolean, ...(EventRow | NoEvent)];
type NoEvent = [null, null, null, null, null, null, null, null, null, null];

/**
 * The change feed of a PostgreSQL store: its reads (./events.ts says why none skips an event), its
 * prune, and its signals: this instance's commits at once, other instances' by NOTIFY (and a slow poll).
 */
export class PostgresFeed extends StoreFeed {
  /** Whether a NOTIFY is being sent, and whether another commit came since it was asked for. */
  private notifying: 'idle' | 'sending' | 'again' = 'idle';

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly logger: Logger,
    /** The payload of this process's NOTIFYs, which its own watch then ignores (StoreFeed.announcesAs). */
    override readonly announcesAs: string,
  ) {
    super();
  }

  protected watchOutside(changed: () => void): () => void {
    return listenForEvents(this.url, this.logger, changed, () => this.eventHead(), this.announcesAs);
  }

  /** This instance committed events: its own waiting readers hear at once, other instances' by NOTIFY. */
  override committed(counts: EventCounts): void {
    super.committed(counts);
    // Sent after the commit, not in its transaction: a NOTIFY in the transaction would make every
    // cancel take the database's notify lock while it commits. Commits that come while one is
    // being sent share the next.
    if (this.notifying !== 'idle') {
      this.notifying = 'again';
      return;
    }
    this.notifying = 'sending';
    const send = (): void => {
      this.pool.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, this.announcesAs]).then(
        () => {
          if (this.notifying === 'again') {
            this.notifying = 'sending';
            send();
          } else this.notifying = 'idle';
        },
        (err: unknown) => {
          this.notifying = 'idle';
          this.logger.warn({ err }, 'could not tell other instances of new events; their waiting readers will see them at their next look');
        },
      );
    };
    send();
  }

  /** A text that changes whenever the feed's last readable event does. */
  private async eventHead(): Promise<string> {
    const { tx, seq } = await this.latestEventPosition();
    return `${tx}/${seq}`;
  }

  async readEvents(after: EventPosition | 'oldest', limit: number): Promise<EventPage> {
    const from = after === 'oldest' ? { tx: '0', seq: 0 } : after;
    const { rows } = await guard(() =>
      this.pool.query<ReadRow>({
        text: EVENTS_SQL.read,
        values: [from.tx, from.seq, limit],
        rowMode: 'array',
      }),
    );
    const [first] = rows;
    if (first === undefined) throw new StoreInvariantError('store_meta has no row: the schema was not migrated');
    const pruned = { tx: first[0], seq: first[1] };
    if (after !== 'oldest' && comparePositions(after, pruned) < 0) {
      throw new EventsExpiredError(`events after ${after.tx}/${after.seq} were removed`);
    }
    const events = rows.flatMap(([, , , ...event]) => (event[0] === null ? [] : [eventRowToRecord(event)]));
    return { events, next: events.at(-1)?.position ?? (after === 'oldest' ? pruned : after), heldBack: first[2] };
  }

  async latestEventPosition(): Promise<EventPosition> {
    const { rows } = await guard(() =>
      this.pool.query<{ pruned_tx: string; pruned_seq: number; tx: string | null; seq: number | null }>(EVENTS_SQL.latest),
    );
    const [row] = rows;
    if (row === undefined) throw new StoreInvariantError('store_meta has no row: the schema was not migrated');
    const pruned = { tx: row.pruned_tx, seq: row.pruned_seq };
    return row.tx === null || row.seq === null ? pruned : laterPosition(pruned, { tx: row.tx, seq: row.seq });
  }

  async pruneEvents(before: string): Promise<number> {
    return pruneInBatches(
      async () => (await guard(() => this.pool.query<{ removed: number }>(EVENTS_SQL.prune, [before]))).rows[0]?.removed ?? 0,
    );
  }
}
