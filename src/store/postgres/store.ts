import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Logger } from '../../logger';
import { silentLogger } from '../../logger';
import { cancelOutcome, cursorSecretOf, etagOf, keyCreationError, prefetched, rowToRecord, shipOutcome, timestamp as now } from '../core';
import { BEFORE_FIRST_ID, statusSql, storeSql, type OrderRow } from '../sql';
import {
  StoreInvariantError,
  type CancelOutcome,
  type ImportRecords,
  type KeyInfo,
  type OrderRecord,
  type OrderSnapshot,
  type PageRequest,
  type OrderStatus,
  type ShipOutcome,
  type Store,
} from '../types';
import { postgresDialect } from './dialect';
import { guardPg, translatePg } from './errors';
import { importIntoPostgres } from './import';
import { migratePostgres } from './migrations';

/** The shared statements: every order of a PostgreSQL store is visible. */
const SQL = storeSql();

/** Options for the PostgreSQL store. */
export interface PostgresStoreOptions {
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** Longest a statement may run before it is cancelled and the request answers 503 (default 5000). */
  statementTimeoutMs?: number;
  /** Longest a request waits for a free connection, or for one to be made (default 2000). */
  connectTimeoutMs?: number;
  logger?: Logger;
}

// BIGINT columns hold ids and quantities that CHECK constraints keep within ±(2^53 − 1), so
// they are exact as JavaScript numbers; pg would otherwise return them as strings.
export const PG_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === (pg.types.builtins.INT8 as number)
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Opens the PostgreSQL store: a pool of connections, with the schema migrated under an advisory
 * lock so that instances starting together do not race. Every instance sharing the database sees
 * the same orders, keys and list revision.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const logger = options.logger ?? silentLogger;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    statement_timeout: options.statementTimeoutMs ?? 5000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    idleTimeoutMillis: 30_000,
    application_name: 'petstore-orders',
    types: PG_TYPES,
  });
  // An idle connection that the server drops (a restart, pg_terminate_backend) emits here; the
  // pool discards it and makes a new one on demand. Without a listener it would crash the process.
  pool.on('error', (err) => logger.warn({ err }, 'a database connection was lost; it will be replaced'));
  try {
    const client = await pool.connect();
    try {
      await migratePostgres(client);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw translatePg(err);
  }
  return new PostgresStore(pool);
}

class PostgresStore implements Store {
  constructor(private readonly pool: pg.Pool) {}

  private query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return guardPg(() => this.pool.query<R>(text, values));
  }

  async snapshotOrders(prefetch = 1000): Promise<OrderSnapshot> {
    return guardPg(async () => {
      const client = await this.pool.connect();
      let cursor: Cursor<OrderRow> | undefined;
      let done = false;
      // Gives the connection back once: ended cleanly for reuse, or destroyed after a failure.
      const finish = async (failure?: unknown): Promise<void> => {
        if (done) return;
        done = true;
        if (failure !== undefined) {
          client.release(true);
          return;
        }
        try {
          await cursor?.close();
          await client.query('COMMIT');
          client.release();
        } catch (err) {
          client.release(err instanceof Error ? err : true);
        }
      };
      try {
        // One snapshot for the ETag and every row, however long the client takes to read them.
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const meta = await client.query<{ store_id: string; revision: number }>(SQL.meta);
        const etag = etagOf(meta.rows[0]);
        // The whole list, from before the first id, with no bound (LIMIT NULL).
        const open = client.query(new Cursor<OrderRow>(SQL.list, [BEFORE_FIRST_ID, null], { rowMode: 'array' }));
        cursor = open;
        // Most lists fit in the first read: then the connection goes back at once.
        const first = await open.read(prefetch + 1);
        const whole = prefetched(etag, first, prefetch);
        if (whole !== undefined) {
          await finish();
          return whole;
        }
        let pending: OrderRow[] = first;
        return {
          etag,
          read: async (max: number): Promise<OrderRecord[]> => {
            if (pending.length < max && !done) {
              try {
                const more = await open.read(max - pending.length);
                if (more.length === 0) await finish();
                pending = pending.concat(more);
              } catch (err) {
                await finish(err);
                throw translatePg(err);
              }
            }
            const chunk = pending.slice(0, max);
            pending = pending.slice(max);
            return chunk.map(rowToRecord);
          },
          close: () => finish(),
        };
      } catch (err) {
        await finish(err);
        throw err;
      }
    });
  }

  async getOrder(id: number): Promise<OrderRecord | undefined> {
    const { rows } = await guardPg(() => this.pool.query<OrderRow>({ text: SQL.order, values: [id], rowMode: 'array' }));
    const row = rows[0];
    return row === undefined ? undefined : rowToRecord(row);
  }

  async pageOrders(request: PageRequest): Promise<OrderRecord[]> {
    const { text, values } = SQL.page(request);
    const { rows } = await guardPg(() => this.pool.query<OrderRow>({ text, values, rowMode: 'array' }));
    return rows.map(rowToRecord);
  }

  async cursorSecret(): Promise<Buffer> {
    return cursorSecretOf(async (sql, value) => {
      const { rows } = await this.query<{ cursor_secret: string | null }>(sql, value === undefined ? [] : [value]);
      return rows[0]?.cursor_secret;
    });
  }

  async listEtag(): Promise<string> {
    const { rows } = await this.query<{ store_id: string; revision: number }>(SQL.meta);
    return etagOf(rows[0]);
  }

  async hasOrders(): Promise<boolean> {
    return (await this.query(SQL.anyOrder)).rowCount === 1;
  }

  async cancelOrder(id: number): Promise<CancelOutcome> {
    const { moved, status } = await this.movePending(id, 'cancelled');
    return cancelOutcome(moved, status);
  }

  async shipOrder(id: number): Promise<ShipOutcome> {
    const { moved, status } = await this.movePending(id, 'shipped');
    return shipOutcome(moved, status);
  }

  /**
   * Moves a pending order to `to` in one statement: the conditional update, its timestamp and the
   * revision bump commit together, so concurrent moves of one order across instances give exactly
   * one `moved`. Otherwise says the order's status (null when there is no such order).
   */
  private async movePending(id: number, to: 'cancelled' | 'shipped'): Promise<{ moved: boolean; status: OrderStatus | null }> {
    const { rows } = await this.query<{ moved: number; status: OrderStatus | null }>(
      `WITH moved AS (
         ${to === 'cancelled' ? SQL.cancel : SQL.ship} RETURNING id
       ), bumped AS (
         ${SQL.bumpRevision} WHERE EXISTS (SELECT 1 FROM moved)
       )
       SELECT (SELECT count(*) FROM moved)::int AS moved, (${statusSql([], '$2')}) AS status`,
      [now(), id],
    );
    const [row] = rows;
    if (row === undefined) throw new StoreInvariantError('a move of an order returned no row');
    return { moved: row.moved === 1, status: row.status };
  }

  async importOrders(records: ImportRecords): Promise<number> {
    const client = await guardPg(() => this.pool.connect());
    let broken = false;
    try {
      return await importIntoPostgres(client, records, now());
    } catch (err) {
      const translated = translatePg(err);
      // A connection that failed under the import is not given back to the pool.
      broken = translated !== err;
      throw translated;
    } finally {
      client.release(broken);
    }
  }

  async petExists(petId: number): Promise<boolean> {
    return (await this.query(SQL.petExists, [petId])).rowCount === 1;
  }

  async createKey(name: string, keyHash: string): Promise<void> {
    try {
      await this.query(SQL.keys.create, [name, keyHash, now()]);
    } catch (err) {
      throw keyCreationError(err, name, postgresDialect);
    }
  }

  async listKeys(): Promise<KeyInfo[]> {
    const { rows } = await this.query<KeyInfo>(SQL.keys.list);
    return rows;
  }

  async revokeKey(name: string): Promise<boolean> {
    return (await this.query(SQL.keys.revoke, [now(), name])).rowCount === 1;
  }

  async findActiveKey(keyHash: string): Promise<string | null> {
    const { rows } = await this.query<{ name: string }>(SQL.keys.findActive, [keyHash]);
    return rows[0]?.name ?? null;
  }

  async ping(): Promise<void> {
    await this.query('SELECT revision FROM store_meta');
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
