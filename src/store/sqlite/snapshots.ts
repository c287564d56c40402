import Database from 'better-sqlite3';
import type { ListedOrder, OrderSnapshot } from '../types';
import { guard, sqlitePlaceholders, storeClosed, translate } from './dialect';
import { etagOf, rowToListed } from '../core';
import { BEFORE_FIRST_ID, type ListedRow } from '../sql';
import { LIST_ALL_SQL, PUBLISHING_SQL, SQL, listFor } from './rows';

interface Reader {
  db: Database.Database;
  begin: Database.Statement;
  meta: Database.Statement<[], { store_id: string; revision: number }>;
  list: Database.Statement<[after: number, limit: number], ListedRow>;
  listAll: Database.Statement<[after: number, limit: number], ListedRow>;
  publishing: Database.Statement<[], number>;
  commit: Database.Statement;
}

/** Idle readers kept however long they wait: a server's occasional lists never open one. */
export const KEPT_IDLE = 4;

/** How long an idle reader past the first KEPT_IDLE is kept before it is closed. */
export const IDLE_CLOSE_MS = 10_000;

/**
 * Read-only connections for list snapshots. A snapshot holds its connection for as long as it
 * streams, so it never blocks the writer connection (WAL lets readers and a writer overlap);
 * idle connections are kept for reuse, up to `maxIdle` (see the constructor).
 */
export class ReaderPool {
  /** Idle readers, the one used last at the end: the next snapshot takes it, so those at the front are the ones left over. */
  private readonly idle: { reader: Reader; since: number }[] = [];
  private closed = false;
  private sweep: NodeJS.Timeout | undefined;

  /**
   * `maxIdle`: the most idle readers kept for the next snapshots, as many as may be read at once
   * (a server's admission limit), so that lists running side by side reuse their connections
   * instead of opening and closing one each. Opening one costs more than reading a page of a
   * thousand orders (docs/performance-log.md). Past the first KEPT_IDLE, a reader idle for
   * IDLE_CLOSE_MS is closed.
   */
  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
    private readonly maxIdle = KEPT_IDLE,
  ) {}

  /** How many idle readers are kept now. */
  get idleCount(): number {
    return this.idle.length;
  }

  /**
   * Opens a snapshot: one read transaction on a connection of its own, so the ETag and every page
   * come from the same moment while writers carry on. Pages are read by keyset, each a single
   * statement, so no statement stays open between chunks.
   *
   * `first` is the list's first page as another transaction read it, with the ETag it read: when
   * the snapshot has the same ETag, it has the same list (the revision changes with every write
   * that changes the list), so those rows are its own first ones, and are not read again.
   */
  open(first?: { readonly etag: string; readonly rows: readonly ListedRow[] }): OrderSnapshot {
    const reader = guard(() => this.acquire());
    let etag: string;
    let list: Reader['list'];
    try {
      reader.begin.run();
      etag = etagOf(reader.meta.get());
      // The same snapshot for every page: without an import being published in it, no order needs the test.
      list = listFor(reader);
    } catch (err) {
      this.discard(reader);
      throw translate(err);
    }
    let done = false;
    /** The rows of `first`, when they are this snapshot's, read from the front: `taken` of them so far. */
    const given: readonly ListedRow[] = first?.etag === etag ? first.rows : [];
    let taken = 0;
    let after = given.at(-1)?.[0] ?? BEFORE_FIRST_ID;
    const finish = (): void => {
      if (done) return;
      done = true;
      try {
        reader.commit.run();
        this.release(reader);
      } catch {
        this.discard(reader);
      }
    };
    return {
      etag,
      read: async (max) => {
        const orders: ListedOrder[] = [];
        for (const end = Math.min(given.length, taken + max); taken < end; taken += 1) {
          const row = given[taken];
          if (row !== undefined) orders.push(rowToListed(row));
        }
        if (orders.length < max && !done) {
          let more: ListedRow[];
          try {
            more = list.all(after, max - orders.length);
          } catch (err) {
            finish();
            throw translate(err);
          }
          if (more.length < max - orders.length) finish();
          else after = more.at(-1)?.[0] ?? after;
          for (const row of more) orders.push(rowToListed(row));
        }
        return orders;
      },
      // A read that found fewer orders than it asked for has read the last of them.
      exhausted: () => done && taken >= given.length,
      close: async () => finish(),
    };
  }

  /** Closes idle connections now, and busy ones as their snapshots finish. */
  close(): void {
    this.closed = true;
    clearTimeout(this.sweep);
    for (const { reader } of this.idle.splice(0)) reader.db.close();
  }

  private acquire(): Reader {
    if (this.closed) throw storeClosed();
    const reused = this.idle.pop();
    if (reused) return reused.reader;
    const db = new Database(this.file, { readonly: true, fileMustExist: true, timeout: this.busyTimeoutMs });
    // A snapshot reads each page once, in order: a small page cache is enough.
    db.pragma('cache_size = -4000');
    return {
      db,
      begin: db.prepare('BEGIN'),
      meta: db.prepare(SQL.meta),
      list: db.prepare<[after: number, limit: number], ListedRow>(sqlitePlaceholders(SQL.snapshot)).raw(true),
      listAll: db.prepare<[after: number, limit: number], ListedRow>(sqlitePlaceholders(LIST_ALL_SQL)).raw(true),
      publishing: db.prepare<[], number>(PUBLISHING_SQL).pluck(),
      commit: db.prepare('COMMIT'),
    };
  }

  private release(reader: Reader): void {
    if (this.closed || this.idle.length >= this.maxIdle) {
      reader.db.close();
      return;
    }
    this.idle.push({ reader, since: performance.now() });
    if (this.idle.length > KEPT_IDLE && this.sweep === undefined) this.sweepIn(IDLE_CLOSE_MS);
  }

  /** Closes, IDLE_CLOSE_MS after they were last used, the idle readers past the first KEPT_IDLE. */
  private sweepIn(ms: number): void {
    this.sweep = setTimeout(() => {
      this.sweep = undefined;
      const now = performance.now();
      // Oldest first: each closed reader leaves the front, until only KEPT_IDLE are left.
      for (const oldest of [...this.idle]) {
        if (this.idle.length <= KEPT_IDLE) return;
        const left = oldest.since + IDLE_CLOSE_MS - now;
        if (left > 0) {
          this.sweepIn(left);
          return;
        }
        this.idle.shift();
        oldest.reader.db.close();
      }
    }, ms);
    // An idle pool never keeps the process alive.
    this.sweep.unref();
  }

  private discard(reader: Reader): void {
    try {
      if (reader.db.inTransaction) reader.db.exec('ROLLBACK');
    } finally {
      reader.db.close();
    }
  }
}
