import fs from 'node:fs';
import path from 'node:path';
import { types } from 'node:util';
import Database from 'better-sqlite3';
import type { Order } from '../../contract/types';
import { StoreUnavailableError } from '../../errors';
import {
  DuplicateKeyNameError,
  ImportConflictError,
  type CancelOutcome,
  type ImportRecord,
  type KeyInfo,
  type OrderStatus,
  type ShipOutcome,
  type Store,
} from '../types';
import { migrate } from './migrations';

/** Options for the SQLite store. */
export interface SqliteStoreOptions {
  /** How long a write waits for another writer's lock before the store reports itself unavailable. */
  busyTimeoutMs?: number;
}

interface OrderRow {
  id: number;
  pet_id: number;
  quantity: number;
  ship_date: string;
  complete: number;
}

/** The one mapping from a stored row to the contract's Order. */
export function rowToOrder(row: OrderRow): Order {
  return {
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    shipDate: row.ship_date,
    complete: row.complete === 1,
  };
}

/**
 * Opens (creating if needed) a SQLite database file in WAL mode and applies migrations.
 * `synchronous = FULL` makes every acknowledged commit durable across a killed process and,
 * on a disk that honours fsync, across a power cut.
 */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, { timeout: options.busyTimeoutMs ?? 5000 });
  try {
    configureConnection(db);
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return new SqliteStore(db);
}

/** The per-connection settings every store connection runs with. */
export function configureConnection(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
}

const now = (): string => new Date().toISOString();

class SqliteStore implements Store {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      list: db.prepare<[], OrderRow>(
        `SELECT id, pet_id, quantity, ship_date, complete FROM orders WHERE status <> 'cancelled' ORDER BY id`,
      ),
      status: db.prepare<[number], { status: OrderStatus }>('SELECT status FROM orders WHERE id = ?'),
      cancel: db.prepare(
        `UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = ? AND status = 'pending'`,
      ),
      ship: db.prepare(`UPDATE orders SET status = 'shipped', shipped_at = ? WHERE id = ? AND status = 'pending'`),
      insertWithId: db.prepare(
        `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at)
         VALUES (@id, @petId, @quantity, @shipDate, @complete, @status, @createdAt, @shippedAt)`,
      ),
      insert: db.prepare(
        `INSERT INTO orders (pet_id, quantity, ship_date, complete, status, created_at, shipped_at)
         VALUES (@petId, @quantity, @shipDate, @complete, @status, @createdAt, @shippedAt)`,
      ),
      petExists: db.prepare<[number], { one: number }>(
        `SELECT 1 AS one FROM orders WHERE pet_id = ? AND status <> 'cancelled' LIMIT 1`,
      ),
      createKey: db.prepare('INSERT INTO api_keys (name, key_hash, created_at) VALUES (?, ?, ?)'),
      listKeys: db.prepare<[], KeyInfo>(
        'SELECT name, created_at AS createdAt, revoked_at AS revokedAt FROM api_keys ORDER BY id',
      ),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL'),
      findKey: db.prepare<[string], { name: string }>(
        'SELECT name FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL',
      ),
      ping: db.prepare('SELECT 1'),
    };
  }

  async listOrders(): Promise<Order[]> {
    return guard(() => this.statements.list.all().map(rowToOrder));
  }

  async cancelOrder(id: number): Promise<CancelOutcome> {
    return guard(() =>
      this.db
        .transaction((): CancelOutcome => {
          if (this.statements.cancel.run(now(), id).changes === 1) return 'cancelled';
          return this.statements.status.get(id)?.status === 'shipped' ? 'shipped' : 'not_found';
        })
        .immediate(),
    );
  }

  async shipOrder(id: number): Promise<ShipOutcome> {
    return guard(() =>
      this.db
        .transaction((): ShipOutcome => {
          if (this.statements.ship.run(now(), id).changes === 1) return 'shipped';
          const status = this.statements.status.get(id)?.status;
          if (status === 'shipped') return 'already_shipped';
          return status === 'cancelled' ? 'cancelled' : 'not_found';
        })
        .immediate(),
    );
  }

  async importOrders(records: readonly ImportRecord[]): Promise<number> {
    return guard(() =>
      this.db
        .transaction(() => {
          const createdAt = now();
          records.forEach((record, index) => {
            const status = record.status ?? 'pending';
            const row = {
              id: record.id,
              petId: record.petId,
              quantity: record.quantity,
              shipDate: record.shipDate,
              complete: record.complete ? 1 : 0,
              status,
              createdAt,
              shippedAt: status === 'shipped' ? createdAt : null,
            };
            try {
              (record.id === undefined ? this.statements.insert : this.statements.insertWithId).run(row);
            } catch (err) {
              if (isSqliteError(err, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
                throw new ImportConflictError(index, 'id', `id ${record.id} is already taken by an existing order`);
              }
              if (record.id === undefined && isSqliteError(err, 'SQLITE_CONSTRAINT_CHECK') && /order_id_safe/.test(String(err))) {
                throw new ImportConflictError(index, 'id', 'id cannot be assigned: the largest id is taken; give this record an id');
              }
              throw err;
            }
          });
          return records.length;
        })
        .immediate(),
    );
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
    if (this.db.open) this.db.close();
  }
}

/**
 * Recognises a SqliteError by shape: the native addon keeps the error class of the first copy of
 * better-sqlite3 loaded in the process, so `instanceof` fails wherever modules are loaded twice.
 */
function sqliteCode(err: unknown): string | undefined {
  const { name, code } = (err ?? {}) as { name?: unknown; code?: unknown };
  return name === 'SqliteError' && typeof code === 'string' ? code : undefined;
}

function isSqliteError(err: unknown, code: string): boolean {
  return sqliteCode(err) === code;
}

/** SQLite result codes that mean "the store cannot serve right now", not "this request is wrong". */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT|PROTOCOL)/;

/** Runs a store operation, turning an unreachable store into StoreUnavailableError. */
function guard<T>(operation: () => T): T {
  try {
    return operation();
  } catch (err) {
    const code = sqliteCode(err);
    if (code !== undefined && UNAVAILABLE.test(code)) {
      throw new StoreUnavailableError(`${code}: ${(err as Error).message}`, { cause: err });
    }
    // better-sqlite3 throws a TypeError once closed; checked by shape, since it may come from another realm.
    if (types.isNativeError(err) && /database connection is not open/.test(err.message)) {
      throw new StoreUnavailableError('the database is closed', { cause: err });
    }
    throw err;
  }
}
