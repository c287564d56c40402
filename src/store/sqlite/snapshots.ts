import Database from 'better-sqlite3';
import type { OrderSnapshot } from '../types';
import { guard, translate } from './errors';
import { LIST_ORDERS_SQL, META_SQL, etagOf, rowToOrder, type OrderRow } from './rows';

interface Reader {
  db: Database.Database;
  begin: Database.Statement;
  meta: Database.Statement<[], { store_id: string; revision: number }>;
  list: Database.Statement<[], OrderRow>;
  commit: Database.Statement;
}

/**
 * Read-only connections for list snapshots. A snapshot holds its connection for as long as it
 * streams, so it never blocks the writer connection (WAL lets readers and a writer overlap);
 * idle connections are kept for reuse, up to `maxIdle`.
 */
export class ReaderPool {
  private readonly idle: Reader[] = [];
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs: number,
    private readonly maxIdle = 4,
  ) {}

  /** Opens a snapshot: one read transaction, so the ETag and every row come from the same moment. */
  open(): OrderSnapshot {
    const reader = guard(() => this.acquire());
    let rows: IterableIterator<OrderRow>;
    let etag: string;
    try {
      reader.begin.run();
      etag = etagOf(reader.meta.get()!);
      rows = reader.list.iterate();
    } catch (err) {
      this.discard(reader);
      throw translate(err);
    }
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      rows.return?.();
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
        const chunk = [];
        try {
          while (!done && chunk.length < max) {
            const next = rows.next();
            if (next.done) finish();
            else chunk.push(rowToOrder(next.value));
          }
        } catch (err) {
          finish();
          throw translate(err);
        }
        return chunk;
      },
      close: async () => finish(),
    };
  }

  /** Closes idle connections now, and busy ones as their snapshots finish. */
  close(): void {
    this.closed = true;
    for (const reader of this.idle.splice(0)) reader.db.close();
  }

  private acquire(): Reader {
    if (this.closed) throw new TypeError('The database connection is not open');
    const reused = this.idle.pop();
    if (reused) return reused;
    const db = new Database(this.file, { readonly: true, fileMustExist: true, timeout: this.busyTimeoutMs });
    return {
      db,
      begin: db.prepare('BEGIN'),
      meta: db.prepare(META_SQL),
      list: db.prepare(LIST_ORDERS_SQL),
      commit: db.prepare('COMMIT'),
    };
  }

  private release(reader: Reader): void {
    if (this.closed || this.idle.length >= this.maxIdle) reader.db.close();
    else this.idle.push(reader);
  }

  private discard(reader: Reader): void {
    try {
      if (reader.db.inTransaction) reader.db.exec('ROLLBACK');
    } finally {
      reader.db.close();
    }
  }
}
