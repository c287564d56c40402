import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  DuplicateKeyNameError,
  type CancelOutcome,
  type ImportRecord,
  type KeyInfo,
  type OrderSnapshot,
  type OrderStatus,
  type ShipOutcome,
  type Store,
} from '../types';
import { guard, isSqliteError } from './errors';
import { importThroughStaging } from './import';
import { migrate } from './migrations';
import { BEFORE_FIRST_ID, BUMP_REVISION_SQL, LIST_PAGE_SQL, META_SQL, etagOf, rowToOrder, type OrderRow } from './rows';
import { GroupCommit } from './group-commit';
import { ReaderPool, snapshotOf } from './snapshots';

/** Options for the SQLite store. */
export interface SqliteStoreOptions {
  /** How long a write waits for another writer's lock before the store reports itself unavailable. */
  busyTimeoutMs?: number;
}

/** The per-connection settings every writer connection runs with. */
export function configureConnection(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
}

/**
 * Opens (creating if needed) a SQLite database file in WAL mode and applies migrations.
 * `synchronous = FULL` makes every acknowledged commit durable across a killed process and,
 * on a disk that honours fsync, across a power cut.
 */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, { timeout: busyTimeoutMs });
  try {
    configureConnection(db);
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return new SqliteStore(db, new ReaderPool(file, busyTimeoutMs), () => {
    const importer = new Database(file, { timeout: busyTimeoutMs });
    configureConnection(importer);
    return importer;
  });
}

const now = (): string => new Date().toISOString();

class SqliteStore implements Store {
  private readonly statements;
  /** Cancels arriving together share one transaction, and so one fsync, before any is answered. */
  private readonly cancels: GroupCommit<number, CancelOutcome>;

  constructor(
    private readonly db: Database.Database,
    private readonly readers: ReaderPool,
    /** Opens a connection of the import's own: its staging transaction spans awaits. */
    private readonly openImporter: () => Database.Database,
  ) {
    this.statements = {
      meta: db.prepare<[], { store_id: string; revision: number }>(META_SQL),
      page: db.prepare<[{ after: number; limit: number }], OrderRow>(LIST_PAGE_SQL).raw(true),
      bump: db.prepare(BUMP_REVISION_SQL),
      anyOrder: db.prepare<[], { one: number }>('SELECT 1 AS one FROM orders LIMIT 1'),
      status: db.prepare<[number], { status: OrderStatus }>('SELECT status FROM orders WHERE id = ?'),
      cancel: db.prepare(`UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = ? AND status = 'pending'`),
      ship: db.prepare(`UPDATE orders SET status = 'shipped', shipped_at = ? WHERE id = ? AND status = 'pending'`),
      petExists: db.prepare<[number], { one: number }>(
        `SELECT 1 AS one FROM orders WHERE pet_id = ? AND status <> 'cancelled' LIMIT 1`,
      ),
      createKey: db.prepare('INSERT INTO api_keys (name, key_hash, created_at) VALUES (?, ?, ?)'),
      listKeys: db.prepare<[], KeyInfo>(
        'SELECT name, created_at AS createdAt, revoked_at AS revokedAt FROM api_keys ORDER BY id',
      ),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL'),
      findKey: db.prepare<[string], { name: string }>('SELECT name FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL'),
      ping: db.prepare('SELECT 1'),
    };
    const cancelAll = db.transaction((ids: readonly number[]): CancelOutcome[] => {
      const at = now();
      const outcomes = ids.map((id): CancelOutcome => {
        if (this.statements.cancel.run(at, id).changes === 1) return 'cancelled';
        return this.statements.status.get(id)?.status === 'shipped' ? 'shipped' : 'not_found';
      });
      if (outcomes.includes('cancelled')) this.statements.bump.run();
      return outcomes;
    });
    this.cancels = new GroupCommit((ids) => guard(() => cancelAll.immediate(ids)));
  }

  async snapshotOrders(prefetch = 1000): Promise<OrderSnapshot> {
    // Most lists fit in one page: read it, with its ETag, in one read transaction on this
    // connection, and take a reader connection only for a list longer than that.
    const first = guard(() =>
      this.db.transaction(() => ({
        etag: etagOf(this.statements.meta.get()!),
        rows: this.statements.page.all({ after: BEFORE_FIRST_ID, limit: prefetch + 1 }),
      }))(),
    );
    if (first.rows.length <= prefetch) return snapshotOf(first.etag, first.rows.map(rowToOrder));
    return this.readers.open();
  }

  async listEtag(): Promise<string> {
    return guard(() => etagOf(this.statements.meta.get()!));
  }

  async hasOrders(): Promise<boolean> {
    return guard(() => this.statements.anyOrder.get() !== undefined);
  }

  async cancelOrder(id: number): Promise<CancelOutcome> {
    return guard(() => {
      // An order that is not pending cannot become pending again, so reading its status outside a
      // transaction answers 404 and 409 without taking the write lock. Only a pending order goes on
      // to the conditional update, which settles any race with another cancel or a ship.
      const before = this.statements.status.get(id)?.status;
      if (before !== 'pending') return before === 'shipped' ? 'shipped' : 'not_found';
      return this.cancels.submit(id);
    });
  }



  async shipOrder(id: number): Promise<ShipOutcome> {
    return guard(() =>
      this.db
        .transaction((): ShipOutcome => {
          if (this.statements.ship.run(now(), id).changes === 1) {
            this.statements.bump.run();
            return 'shipped';
          }
          const status = this.statements.status.get(id)?.status;
          if (status === 'shipped') return 'already_shipped';
          return status === 'cancelled' ? 'cancelled' : 'not_found';
        })
        .immediate(),
    );
  }

  async importOrders(records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>): Promise<number> {
    // The staging transaction stays open while the records stream in, so it must not share the
    // connection that serves cancels and lists in the meantime.
    const importer = guard(() => this.openImporter());
    try {
      return await importThroughStaging(importer, records, now());
    } finally {
      importer.close();
    }
  }

  async petExists(petId: number): Promise<boolean> {
    return guard(() => this.statements.petExists.get(petId) !== undefined);
  }

  async createKey(name: string, keyHash: string): Promise<void> {
    guard(() => {
      try {
        this.statements.createKey.run(name, keyHash, now());
      } catch (err) {
        if (isSqliteError(err, 'SQLITE_CONSTRAINT_UNIQUE')) {
          throw new DuplicateKeyNameError(`a key named "${name}" already exists`);
        }
        throw err;
      }
    });
  }

  async listKeys(): Promise<KeyInfo[]> {
    return guard(() => this.statements.listKeys.all());
  }

  async revokeKey(name: string): Promise<boolean> {
    return guard(() => this.statements.revokeKey.run(now(), name).changes === 1);
  }

  async findActiveKey(keyHash: string): Promise<string | null> {
    return guard(() => this.statements.findKey.get(keyHash)?.name ?? null);
  }

  async ping(): Promise<void> {
    guard(() => this.statements.ping.get());
  }

  async close(): Promise<void> {
    this.readers.close();
    if (this.db.open) this.db.close();
  }
}
