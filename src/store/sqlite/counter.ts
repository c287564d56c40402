import Database from 'better-sqlite3';
import type { RateUnit } from '../../rate-policy';
import { drive } from '../dialect';
import { countSteps, rateSql } from '../rates';
import type { RateCount } from '../types';
import { sqliteConnection, sqliteDialect } from './dialect';
import { GroupCommit } from './group-commit';
import { retryWhileBusy, type Writer } from './writer';

/** The count's statements, by SQLite's clock. */
const RATE_SQL = rateSql(sqliteDialect.clock);

/** One request to count against its key's quotas. */
interface CountRequest {
  readonly keyName: string;
  readonly quotas: Partial<Record<RateUnit, number>>;
}

/**
 * The rate-limit count of a SQLite store (../rates.ts): the requests that arrive together are
 * counted in one transaction of a connection of its own, and so one commit, each request's
 * statement checking and counting in turn, so that the batch is as exact as one statement each.
 */
export class Counter {
  private readonly counts = new GroupCommit<CountRequest, RateCount>((requests, since) => this.countBatch(requests, since));
  /** The connection and its batch, once a key with a policy has been counted. */
  private opened: { db: Database.Database; countAll: (batch: readonly CountRequest[]) => RateCount[] } | undefined;

  constructor(private readonly writer: Writer) {}

  count(keyName: string, quotas: Partial<Record<RateUnit, number>>): Promise<RateCount> {
    return this.counts.submit({ keyName, quotas });
  }

  /**
   * The transaction's COMMIT runs the log's automatic checkpoint (a write statement's own commit
   * would not when better-sqlite3's get() ends it by a reset, and the log would grow without bound).
   */
  private countBatch(requests: readonly CountRequest[], since: number): Promise<RateCount[]> {
    const { countAll } = this.opened ?? this.open();
    return retryWhileBusy(() => this.writer.guard(() => countAll(requests)), since, this.writer.busyTimeoutMs);
  }

  /**
   * The count's own connection, opened on first use. Its commits are not synced to disk
   * (synchronous = NORMAL, in WAL mode): a counted batch costs a write to the log, not an fsync. A
   * crash of the process loses nothing; a power cut may lose the last counts, and so admit up to a
   * window's quota again. It never waits for a lock by sleeping (busy_timeout = 0): a batch asks
   * again after a pause that lets the event loop run.
   */
  private open(): NonNullable<Counter['opened']> {
    const db = new Database(this.writer.db.name);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 0');
    const connection = sqliteConnection(db);
    const countAll = db.transaction((batch: readonly CountRequest[]) =>
      batch.map(({ keyName, quotas }) => drive(countSteps(RATE_SQL, keyName, quotas), connection)),
    );
    this.opened = { db, countAll: (batch) => countAll.immediate(batch) };
    return this.opened;
  }

  close(): void {
    if (this.opened?.db.open) this.opened.db.close();
  }
}
