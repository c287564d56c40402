import { EventsExpiredError } from '../errors';
import { StoreFeed, eventRowToRecord, pruneInBatches, type EventRow } from '../events';
import type { EventPage, EventPosition } from '../types';
import { sqlitePlaceholders } from './dialect';
import { EVENTS_SQL } from './rows';
import type { Writer } from './writer';

/**
 * How often (ms) a store that someone is waiting on looks for events that other processes (the
 * CLI, another server on the same file) committed; this process's own wake its readers at once.
 */
const EVENT_POLL_MS = 25;

/**
 * The change feed of a SQLite store, on its writer connection: its reads (./rows.ts says why none
 * skips an event), its prune, and its signals: this process's commits at once, other processes'
 * by a poll of the feed's head.
 */
export class SqliteFeed extends StoreFeed {
  private readonly statements;
  /** One prune batch of the events before a time: one read of its bound, one delete. */
  private readonly pruneBatch: { immediate(before: string): number };
  /** One read of the feed, the prune's mark and the events of the same moment. */
  private readonly readPage: (after: EventPosition | 'oldest', limit: number) => EventPage;
  /** The feed's head as the poll last saw it, or as a commit this process was told of showed it. */
  private polledHead: string | undefined;

  constructor(private readonly writer: Writer) {
    super();
    const { db } = writer;
    const prepare = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sqlitePlaceholders(sql));
    this.statements = {
      events: prepare<[after: number, limit: number], EventRow>(EVENTS_SQL.read).raw(true),
      pruned: prepare<[], number>(EVENTS_SQL.pruned).pluck(),
      latest: prepare<[], number>(EVENTS_SQL.latest).pluck(),
      head: prepare<[], string>(EVENTS_SQL.head).pluck(),
      firstKept: prepare<[string], number>(EVENTS_SQL.firstKept).pluck(),
      pruneUpTo: prepare<[number], number | null>(EVENTS_SQL.pruneUpTo).pluck(),
      prune: prepare<[number], never>(EVENTS_SQL.prune),
      markPruned: prepare<[number], never>(EVENTS_SQL.markPruned),
    };
    const { statements } = this;
    this.readPage = db.transaction((after: EventPosition | 'oldest', limit: number): EventPage => {
      const pruned = statements.pruned.get() ?? 0;
      if (after !== 'oldest' && after.seq < pruned) throw new EventsExpiredError(`events after ${after.seq} were removed`);
      const from = after === 'oldest' ? pruned : after.seq;
      const events = statements.events.all(from, limit).map(eventRowToRecord);
      return { events, next: events.at(-1)?.position ?? { tx: '0', seq: from } };
    });
    this.pruneBatch = db.transaction((before: string): number => {
      const upTo = statements.pruneUpTo.get(statements.firstKept.get(before) ?? Number.MAX_SAFE_INTEGER) ?? null;
      if (upTo === null) return 0;
      const { changes } = statements.prune.run(upTo);
      statements.markPruned.run(upTo);
      return changes;
    });
  }

  protected watchOutside(changed: () => void): () => void {
    const { head } = this.statements;
    this.polledHead = head.get();
    const poll = setInterval(() => {
      try {
        const now = this.writer.guard(() => head.get());
        if (now === this.polledHead) return;
        this.polledHead = now;
        changed();
      } catch {
        // A store that cannot be read now is read again at the next poll; its readers see the error.
      }
    }, EVENT_POLL_MS);
    poll.unref();
    return () => clearInterval(poll);
  }

  protected override seenOutside(): void {
    try {
      this.polledHead = this.writer.guard(() => this.statements.head.get());
    } catch {
      // The poll reads it again, and wakes the watchers once more at worst.
    }
  }

  readEvents(after: EventPosition | 'oldest', limit: number): EventPage {
    return this.writer.guard(() => this.readPage(after, limit));
  }

  latestEventPosition(): EventPosition {
    return this.writer.guard(() => ({ tx: '0', seq: this.statements.latest.get() ?? 0 }));
  }

  async pruneEvents(before: string): Promise<number> {
    // A batch per write transaction, so that a cancel never waits long for the lock.
    return pruneInBatches(() => this.writer.whenFree(() => this.pruneBatch.immediate(before)));
  }
}
