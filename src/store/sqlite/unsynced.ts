import Database from 'better-sqlite3';
import type { SyncConnection } from '../dialect';
import { sqliteConnection } from './dialect';
import { GroupCommit } from './group-commit';
import { retryWhileBusy, type Writer } from './writer';

/**
 * Writes whose loss in a power cut costs nothing a client was promised, batched: the requests that
 * arrive together run in one transaction on a connection of their own, opened on first use, whose
 * commits are not synced to disk (`synchronous = NORMAL`, in WAL mode). A commit then costs a write
 * to the log, not an fsync that would hold the event loop: a crash of the process loses nothing, a
 * power cut may lose the last batches (the log keeps them in order, so never one without those
 * before it). The connection never waits for a lock by sleeping (`busy_timeout = 0`): a batch asks
 * again after a pause that lets the event loop run, for up to the writer's busy timeout.
 *
 * Its users: the rate-limit count (./counter.ts), and webhook delivery's bookkeeping (./store.ts).
 */
export class UnsyncedBatches<In, Out> {
  private readonly batches = new GroupCommit<In, Out>((inputs, since) => this.runBatch(inputs, since));
  /** The connection and its batch, once something was submitted. */
  private opened: { db: Database.Database; runAll: (batch: readonly In[]) => Out[] } | undefined;

  /** `all` runs a batch's requests on the connection, inside its transaction, and gives each its outcome, in order. */
  constructor(
    private readonly writer: Writer,
    private readonly all: (inputs: readonly In[], connection: SyncConnection) => Out[],
  ) {}

  /** Queues one request; resolves with its outcome once its batch has committed. */
  submit(input: In): Promise<Out> {
    return this.batches.submit(input);
  }

  /**
   * The transaction's COMMIT runs the log's automatic checkpoint (a write statement's own commit
   * would not when better-sqlite3's get() ends it by a reset, and the log would grow without bound).
   */
  private runBatch(inputs: readonly In[], since: number): Promise<Out[]> {
    const { runAll } = this.opened ?? this.open();
    return retryWhileBusy(
      () => {
        const outcomes = this.writer.guard(() => runAll(inputs));
        // Committed: a read of the writer's that follows sees it, though the turn's reads began before.
        this.writer.endReads();
        return outcomes;
      },
      since,
      this.writer.busyTimeoutMs,
    );
  }

  private open(): NonNullable<UnsyncedBatches<In, Out>['opened']> {
    const db = new Database(this.writer.db.name);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 0');
    const connection = sqliteConnection(db);
    const runAll = db.transaction((batch: readonly In[]) => this.all(batch, connection));
    this.opened = { db, runAll: (batch) => runAll.immediate(batch) };
    return this.opened;
  }

  close(): void {
    if (this.opened?.db.open) this.opened.db.close();
  }
}
