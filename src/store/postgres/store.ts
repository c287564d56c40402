import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import pg from 'pg';
import type { Logger } from '../../logger';
import { silentLogger } from '../../logger';
import { rowToRecord, timestamp as now } from '../core';
import { drive } from '../dialect';
import { pruneInBatches } from '../events';
import { cancelOutcome, moveStatements, shipOutcome, MOVE_EVENTS, type Moved, type MoveTo } from '../moves';
import { keptSteps, placementSteps, nextIdSql, PLACEMENT_SQL } from '../placement';
import { countAllSteps, rateSql, type CountRequest } from '../rates';
import { SharedStore, sharedOperations } from '../shared-operations';
import { orderSql, storeSql, type OrderRow } from '../sql';
import { StoreInvariantError, UnsupportedDatabaseError } from '../errors';
import type {
  CancelOutcome,
  ImportRecords,
  KeyMatch,
  OrderRecord,
  PageRequest,
  PlaceOutcome,
  Placement,
  RateCount,
  ShipOutcome,
  Store,
} from '../types';
import type { RateUnit } from '../../rate-policy';
import { guard, guardedQueryable, postgresDialect, postgresQueryable, prepared, translate, withClient } from './dialect';
import { BatchedReads, ONE_TURN } from './batched-reads';
import { PostgresFeed } from './feed';
import { openSnapshot } from './snapshot';
import { importIntoPostgres } from './import';
import { migrate } from './migrations';

/** The shared statements: every order of a PostgreSQL store is visible. */
const SQL = storeSql();
/** The orders named in the array `$1`, each as SQL.order reads one (every order visible here too). */
const ORDERS_IN_SQL = orderSql([], 'id = ANY($1)');
/** Each move as the one statement it is here (../moves.ts). */
const MOVES = moveStatements(SQL);
/** The rate-limit count's statements, by PostgreSQL's clock. */
const RATE_SQL = rateSql(postgresDialect.clock);

/** PostgreSQL's unique_violation: an id another transaction committed first. */
const UNIQUE_VIOLATION = '23505';
/** How many times a placement chooses its id before its failure is the request's. */
const PLACEMENT_ATTEMPTS = 3;
/** Every id a placement may take is above every order's: nothing else holds ids back here. */
const NEXT_ID_SQL = nextIdSql([]);

/** Options for the PostgreSQL store. */
export interface PostgresStoreOptions {
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** Longest a statement may run before it is cancelled and the request answers 503 (default 5000). */
  statementTimeoutMs?: number;
  /** Longest a request waits for a free connection, or for one to be made (default 2000). */
  connectTimeoutMs?: number;
  logger?: Logger;
  /** The name this store's commits are announced under (Store.announcesAs; default: a new one of its own). */
  announceAs?: string | undefined;
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
  const poolOptions: pg.PoolConfig = {
    connectionString: url,
    max: options.poolSize ?? 10,
    statement_timeout: options.statementTimeoutMs ?? 5000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    idleTimeoutMillis: 30_000,
    application_name: 'petstore-orders',
    types: PG_TYPES,
  };
  const pool = new pg.Pool(poolOptions);
  // An idle connection that the server drops (a restart, pg_terminate_backend) emits here; the
  // pool discards it and makes a new one on demand. Without a listener it would crash the process.
  pool.on('error', (err) => logger.warn({ err }, 'a database connection was lost; it will be replaced'));
  try {
    const client = await pool.connect();
    try {
      await refuseUnlessUtf8(client);
      await migrate(client);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw translate(err);
  }
  return new PostgresStore(pool, url, logger, poolOptions, options.announceAs ?? randomUUID());
}

/**
 * Refuses a database not encoded in UTF8: orders keep any text a client sends, and the ship date's
 * CHECK names Unicode's spaces, which a database in SQL_ASCII or LATIN1 cannot hold (its migration
 * would fail on "requested character too large for encoding"). Checked before the first migration.
 */
async function refuseUnlessUtf8(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ encoding: string; name: string }>(
    'SELECT pg_encoding_to_char(encoding) AS encoding, datname AS name FROM pg_database WHERE datname = current_database()',
  );
  const [database] = rows;
  if (database === undefined || database.encoding === 'UTF8') return;
  throw new UnsupportedDatabaseError(
    `database "${database.name}" is encoded in ${database.encoding}; petstore-orders needs UTF8. ` +
      `Make one with CREATE DATABASE <name> ENCODING 'UTF8' TEMPLATE template0, and point PETSTORE_DATABASE_URL at it.`,
  );
}

/** Connections an instance opens for rate-limit counts, beside its pool, once a key with a policy is used. */
const COUNTER_CONNECTIONS = 4;

class PostgresStore extends SharedStore implements Store {
  /** The change feed: its reads, its prune, and who hears of events. */
  protected readonly feed: PostgresFeed;

  /** The rate-limit count's connections, and a turn's counts gathered over them, once a key with a policy has been counted (openCounter()). */
  private counter: { readonly pool: pg.Pool; readonly counts: DataLoader<CountRequest, RateCount> } | undefined;
  /** The pool's next free connection, as the shared algorithms drive it. */
  private readonly pooled;
  /** The key checks and one-order reads of a turn of the event loop, one statement each. */
  private readonly reads: BatchedReads;
  protected readonly shared;

  constructor(
    private readonly pool: pg.Pool,
    url: string,
    private readonly logger: Logger,
    /** How the pool was made, for the count's own connections. */
    private readonly poolOptions: pg.PoolConfig,
    announceAs: string,
  ) {
    super();
    this.feed = new PostgresFeed(pool, url, logger, announceAs);
    this.pooled = guardedQueryable(pool);
    this.reads = new BatchedReads(pool, { order: SQL.order, ordersIn: ORDERS_IN_SQL });
    this.shared = sharedOperations(SQL, postgresDialect, { read: this.pooled, write: this.pooled });
  }

  snapshotOrders: Store['snapshotOrders'] = (prefetch = 1000) => openSnapshot(this.pool, SQL, prefetch);

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return guard(() => this.pool.query<R>(prepared(text, values)));
  }

  getOrder(id: number): Promise<OrderRecord | undefined> {
    return this.reads.getOrder(id);
  }

  override findKey(keyHash: string, at: string): Promise<KeyMatch | null> {
    return this.reads.findKey(keyHash, at);
  }

  async pageOrders(request: PageRequest): Promise<OrderRecord[]> {
    const { text, values } = SQL.page(request);
    const { rows } = await guard(() => this.pool.query<OrderRow>({ text, values, rowMode: 'array' }));
    return rows.map(rowToRecord);
  }

  async cancelOrder(id: number): Promise<CancelOutcome> {
    return cancelOutcome(await this.movePending('cancelled', id));
  }

  async shipOrder(id: number): Promise<ShipOutcome> {
    return shipOutcome(await this.movePending('shipped', id));
  }

  /** A move of a pending order (../moves.ts), in one statement: its own transaction, one round trip. */
  private async movePending(to: MoveTo, id: number): Promise<Moved> {
    const [row] = (await this.query<{ moved: number; status: Moved['status'] }>(MOVES[to], [now(), id])).rows;
    if (row === undefined) throw new StoreInvariantError('a move of an order returned no row');
    if (row.moved === 1) this.feed.committed({ [MOVE_EVENTS[to].type]: 1 });
    return { moved: row.moved === 1, status: row.status };
  }

  async placeOrder(placement: Placement): Promise<PlaceOutcome> {
    // A key whose record is kept is answered from it at once, without a transaction or the key's
    // lock: a retry costs one read, and retries of a placed key never wait on one another.
    const kept = await drive(keptSteps(placement), this.pooled);
    if (kept !== undefined) return kept;
    // An import's COPY commits ids this placement's statements could not see: its id is chosen again.
    for (let attempt = 1; ; attempt += 1) {
      try {
        const outcome = await this.placeOnce(placement);
        if (outcome.outcome === 'placed') this.feed.committed({ 'order.created': 1 });
        return outcome;
      } catch (err) {
        if (
          attempt >= PLACEMENT_ATTEMPTS ||
          !(err instanceof pg.DatabaseError && err.code === UNIQUE_VIOLATION && err.table === 'orders')
        ) {
          throw err;
        }
      }
    }
  }

  /**
   * One attempt at a placement (../placement.ts), in one transaction on one connection. Its claim
   * is the key's advisory lock, held to the commit, which makes a second placement of the same key,
   * in any instance, `in_use` at once instead of waiting for the first.
   */
  private placeOnce(placement: Placement): Promise<PlaceOutcome> {
    return withClient(this.pool, async (client) => {
      await client.query('BEGIN');
      const claim = 'SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS claimed';
      const claimed = await client.query<{ claimed: boolean }>(claim, [placement.keyName, placement.idempotencyKey]);
      const outcome =
        claimed.rows[0]?.claimed === true
          ? await drive(placementSteps(placement, now(), { nextId: NEXT_ID_SQL }), postgresQueryable(client))
          : ({ outcome: 'in_use' } as const);
      await client.query(outcome.outcome === 'placed' ? 'COMMIT' : 'ROLLBACK');
      return outcome;
    });
  }

  async pruneIdempotencyKeys(before: string): Promise<number> {
    return pruneInBatches(async () => (await this.query(PLACEMENT_SQL.prune, [before])).rowCount ?? 0);
  }

  async importOrders(records: ImportRecords): Promise<number> {
    const imported = await withClient(this.pool, (client) => importIntoPostgres(client, records, now()));
    if (imported > 0) this.feed.committed({ 'order.created': imported });
    return imported;
  }

  countRequest(keyName: string, quotas: Partial<Record<RateUnit, number>>): Promise<RateCount> {
    return (this.counter ??= this.openCounter()).counts.load({ keyName, quotas });
  }

  /**
   * The rate-limit count's own few connections, opened once a key with a policy is first counted.
   * Their commits do not wait for the log to reach the disk (synchronous_commit = off): a counted
   * request costs a commit, not a flush. The count is as exact (each upsert holds the key's row
   * until it commits); a crash of the database may lose the last counts (those of its last fraction
   * of a second), and so admit them again. The requests of one turn of the event loop are counted
   * together (countAllSteps): one statement for each key's while its quotas have room for all.
   */
  private openCounter(): NonNullable<PostgresStore['counter']> {
    const pool = new pg.Pool({ ...this.poolOptions, max: COUNTER_CONNECTIONS, options: '-c synchronous_commit=off' });
    pool.on('error', (err) => this.logger.warn({ err }, 'a database connection was lost; it will be replaced'));
    const queryable = guardedQueryable(pool);
    const counts = new DataLoader<CountRequest, RateCount>(
      async (requests) => drive(countAllSteps(RATE_SQL, requests), queryable),
      ONE_TURN,
    );
    return { pool, counts };
  }

  async ping(): Promise<void> {
    await this.query('SELECT revision FROM store_meta');
  }

  async close(): Promise<void> {
    this.feed.stopWatching();
    if (this.counter !== undefined && !this.counter.pool.ended) await this.counter.pool.end();
    if (!this.pool.ended) await this.pool.end();
  }
}
