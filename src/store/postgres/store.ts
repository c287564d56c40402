import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Logger } from '../../logger';
import { silentLogger } from '../../logger';
import {
  cancelOutcome,
  cursorSecretOf,
  etagOf,
  keptOutcome,
  keyCreationError,
  keyInfoOf,
  keyUpdateValues,
  newKeyValues,
  placedOrderValues,
  placedRecord,
  prefetched,
  rateCountOf,
  rowToListed,
  rowToRecord,
  shipOutcome,
  timestamp as now,
} from '../core';
import {
  EventSignals,
  MOVE_EVENTS,
  comparePositions,
  eventRowToRecord,
  insertEventsSql,
  laterPosition,
  pruneInBatches,
  type EventRow,
} from '../events';
import {
  BEFORE_FIRST_ID,
  PLACED_COLUMNS,
  PLACEMENT_SQL,
  rateCountValues,
  rateSql,
  statusSql,
  storeSql,
  type ListedRow,
  type OrderRow,
} from '../sql';
import { EventsExpiredError, StoreInvariantError } from '../errors';
import type {
  CancelOutcome,
  ImportRecords,
  KeyChanges,
  KeyInfo,
  KeyMatch,
  ListedOrder,
  NewKey,
  OrderRecord,
  RateCount,
  OrderSnapshot,
  OrderStatus,
  PageRequest,
  PlaceOutcome,
  Placement,
  ShipOutcome,
} from '../types';
import type { RateUnit } from '../../rate-policy';
import type { EventCounts, EventPage, EventPosition, Store } from '../types';
import { guard, postgresDialect, translate } from './dialect';
import { EVENTS_CHANNEL, EVENTS_SQL, listenForEvents } from './events';
import { importIntoPostgres } from './import';
import { migrate } from './migrations';

/** The shared statements: every order of a PostgreSQL store is visible. */
const SQL = storeSql();

/** PostgreSQL's unique_violation: an id another transaction committed first. */
const UNIQUE_VIOLATION = '23505';
/** How many times a placement chooses its id before its failure is the request's. */
const PLACEMENT_ATTEMPTS = 3;

/**
 * A placement's key record (PLACEMENT_SQL.record's), or, when there is none, the revision bumped
 * (its row lock held to the commit): one row, whose fingerprint and answer are null without a record.
 */
const RECORD_OR_BUMP_SQL = `WITH kept AS (${PLACEMENT_SQL.record}),
  bumped AS (${SQL.bumpRevision} WHERE NOT EXISTS (SELECT 1 FROM kept) RETURNING 1)
  SELECT k.fingerprint, k.answer FROM (SELECT 1) one LEFT JOIN kept k ON true`;

/**
 * A placed order under the next id, and its order.created event: placedOrderValues' values (pet,
 * quantity, ship date, ship instant, time, complete), the id one above the largest in the table.
 */
const PLACE_SQL = `WITH next AS (SELECT coalesce(max(id), 0) + 1 AS id FROM orders),
  placed AS (
    INSERT INTO orders (${PLACED_COLUMNS})
    SELECT id, $1, $2, $3, $4, $5, $6, 'pending' FROM next RETURNING id
  )
  ${insertEventsSql(`SELECT 'order.created', id, 'pending', FALSE, $5 FROM placed`)} RETURNING order_id AS id`;
/** The rate-limit count, by PostgreSQL's clock. */
const RATE = rateSql(postgresDialect.clock);

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
      await migrate(client);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw translate(err);
  }
  return new PostgresStore(pool, url, logger, poolOptions);
}

/** Connections an instance opens for rate-limit counts, beside its pool, once a key with a policy is used. */
const COUNTER_CONNECTIONS = 4;

/** A row of EVENTS_SQL.read: the prune's mark, then an event, or nulls when there is none. */
type ReadRow = [prunedTx: string, prunedSeq: number, heldBack: boolean, ...(EventRow | NoEvent)];
type NoEvent = [null, null, null, null, null, null, null, null, null, null];

class PostgresStore implements Store {
  /** Who hears of events: this instance's commits at once, others' by NOTIFY (and a slow poll). */
  private readonly signals: EventSignals;
  /** Whether a NOTIFY is being sent, and whether another commit came since it was asked for. */
  private notifying: 'idle' | 'sending' | 'again' = 'idle';

  /** The rate-limit count's connections, once a key with a policy has been counted (openCounter()). */
  private counter: pg.Pool | undefined;

  constructor(
    private readonly pool: pg.Pool,
    url: string,
    private readonly logger: Logger,
    /** How the pool was made, for the count's own connections. */
    private readonly poolOptions: pg.PoolConfig,
  ) {
    this.signals = new EventSignals((changed) => listenForEvents(url, logger, changed, () => this.eventHead()));
  }

  /** This instance committed events: its own waiting readers hear at once, other instances' by NOTIFY. */
  private committed(counts: EventCounts): void {
    this.signals.committed(counts);
    // Sent after the commit, not in its transaction: a NOTIFY in the transaction would make every
    // cancel take the database's notify lock while it commits. Commits that come while one is
    // being sent share the next.
    if (this.notifying !== 'idle') {
      this.notifying = 'again';
      return;
    }
    this.notifying = 'sending';
    const send = (): void => {
      this.pool.query(`SELECT pg_notify('${EVENTS_CHANNEL}', '')`).then(
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

  private query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return guard(() => this.pool.query<R>(text, values));
  }

  async snapshotOrders(prefetch = 1000): Promise<OrderSnapshot> {
    return guard(async () => {
      const client = await this.pool.connect();
      let cursor: Cursor<ListedRow> | undefined;
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
        const open = client.query(new Cursor<ListedRow>(SQL.snapshot, [BEFORE_FIRST_ID, null], { rowMode: 'array' }));
        cursor = open;
        // Most lists fit in the first read: then the connection goes back at once.
        const first = await open.read(prefetch + 1);
        const whole = prefetched(etag, first, prefetch);
        if (whole !== undefined) {
          await finish();
          return whole;
        }
        let pending: ListedRow[] = first;
        return {
          etag,
          read: async (max: number): Promise<ListedOrder[]> => {
            if (pending.length < max && !done) {
              try {
                const more = await open.read(max - pending.length);
                if (more.length === 0) await finish();
                pending = pending.concat(more);
              } catch (err) {
                await finish(err);
                throw translate(err);
              }
            }
            const chunk = pending.slice(0, max);
            pending = pending.slice(max);
            return chunk.map(rowToListed);
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
    const { rows } = await guard(() => this.pool.query<OrderRow>({ text: SQL.order, values: [id], rowMode: 'array' }));
    const row = rows[0];
    return row === undefined ? undefined : rowToRecord(row);
  }

  async pageOrders(request: PageRequest): Promise<OrderRecord[]> {
    const { text, values } = SQL.page(request);
    const { rows } = await guard(() => this.pool.query<OrderRow>({ text, values, rowMode: 'array' }));
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
    const event = MOVE_EVENTS[to];
    const { rows } = await this.query<{ moved: number; status: OrderStatus | null }>(
      `WITH moved AS (
         ${to === 'cancelled' ? SQL.cancel : SQL.ship} RETURNING id
       ), bumped AS (
         ${SQL.bumpRevision} WHERE EXISTS (SELECT 1 FROM moved)
       ), evented AS (
         ${insertEventsSql(`SELECT '${event.type}', id, ${event.status === null ? 'NULL' : `'${event.status}'`}, ${event.complete === null ? 'NULL' : 'TRUE'}, $1 FROM moved`)}
       )
       SELECT (SELECT count(*) FROM moved)::int AS moved, (${statusSql([], '$2')}) AS status`,
      [now(), id],
    );
    const [row] = rows;
    if (row === undefined) throw new StoreInvariantError('a move of an order returned no row');
    if (row.moved === 1) this.committed({ [event.type]: 1 });
    return { moved: row.moved === 1, status: row.status };
  }

  async placeOrder(placement: Placement): Promise<PlaceOutcome> {
    // A key whose record is kept is answered from it at once, without a transaction or the key's
    // lock: a retry costs one read, and retries of a placed key never wait on one another.
    const kept = await this.query<{ fingerprint: string; answer: string }>(PLACEMENT_SQL.record, [
      placement.keyName,
      placement.idempotencyKey,
      placement.keptSince,
    ]);
    const record = kept.rows[0];
    if (record !== undefined) return keptOutcome(record, placement.fingerprint);
    // An import committing orders meanwhile can take the id this placement chose: it is chosen again.
    for (let attempt = 1; ; attempt += 1) {
      try {
        const outcome = await this.placeOnce(placement);
        if (outcome.outcome === 'placed') this.committed({ 'order.created': 1 });
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
   * One attempt at a placement, in one transaction on one connection. The key's advisory lock
   * (held to the commit) makes a second placement of the same key, in any instance, `in_use` at
   * once instead of waiting for the first; the key's record is read again once the lock is held,
   * for a first placement that committed since the read before it. The revision's row lock (every
   * write of orders takes it) makes the id read after it above every committed order's.
   */
  private async placeOnce(placement: Placement): Promise<PlaceOutcome> {
    const { keyName, idempotencyKey, fingerprint, order } = placement;
    const client = await guard(() => this.pool.connect());
    let broken = false;
    try {
      await client.query('BEGIN');
      const locked = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS locked', [
        keyName,
        idempotencyKey,
      ]);
      if (locked.rows[0]?.locked !== true) {
        await client.query('ROLLBACK');
        return { outcome: 'in_use' };
      }
      // The key's record read again, now that the lock is held, and the revision bumped unless it
      // is there: one statement.
      const kept = await client.query<{ fingerprint: string | null; answer: string | null }>(RECORD_OR_BUMP_SQL, [
        keyName,
        idempotencyKey,
        placement.keptSince,
      ]);
      const record = kept.rows[0];
      if (record?.fingerprint != null && record.answer != null) {
        await client.query('ROLLBACK');
        return keptOutcome({ fingerprint: record.fingerprint, answer: record.answer }, fingerprint);
      }
      // One statement for the order and its event, begun once the revision's lock is held, so that
      // its snapshot holds every order committed before.
      const at = now();
      const placed = await client.query<{ id: number }>(PLACE_SQL, placedOrderValues(order, at, false));
      const id = placed.rows[0]?.id;
      if (id === undefined) throw new StoreInvariantError('a placement inserted no order');
      const answer = placement.answer(placedRecord(id, order));
      await client.query(PLACEMENT_SQL.remember, [keyName, idempotencyKey, fingerprint, id, answer, at]);
      await client.query('COMMIT');
      return { outcome: 'placed', answer };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      const translated = translate(err);
      // A connection that failed under the placement is not given back to the pool.
      broken = translated !== err;
      throw translated;
    } finally {
      client.release(broken);
    }
  }

  async pruneIdempotencyKeys(before: string): Promise<number> {
    return pruneInBatches(async () => (await this.query(PLACEMENT_SQL.prune, [before])).rowCount ?? 0);
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
    const { rows } = await this.query<{ pruned_tx: string; pruned_seq: number; tx: string | null; seq: number | null }>(EVENTS_SQL.latest);
    const [row] = rows;
    if (row === undefined) throw new StoreInvariantError('store_meta has no row: the schema was not migrated');
    const pruned = { tx: row.pruned_tx, seq: row.pruned_seq };
    return row.tx === null || row.seq === null ? pruned : laterPosition(pruned, { tx: row.tx, seq: row.seq });
  }

  watchEvents(listener: () => void): () => void {
    return this.signals.watch(listener);
  }

  onEventsWritten(listener: (counts: EventCounts) => void): () => void {
    return this.signals.onWritten(listener);
  }

  async pruneEvents(before: string): Promise<number> {
    return pruneInBatches(async () => (await this.query<{ removed: number }>(EVENTS_SQL.prune, [before])).rows[0]?.removed ?? 0);
  }

  async importOrders(records: ImportRecords): Promise<number> {
    const client = await guard(() => this.pool.connect());
    let broken = false;
    try {
      const imported = await importIntoPostgres(client, records, now());
      if (imported > 0) this.committed({ 'order.created': imported });
      return imported;
    } catch (err) {
      const translated = translate(err);
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

  async createKey(name: string, keyHash: string, key: NewKey = {}): Promise<void> {
    try {
      await this.query(SQL.keys.create, newKeyValues(name, keyHash, now(), key));
    } catch (err) {
      throw keyCreationError(err, name, postgresDialect);
    }
  }

  async listKeys(): Promise<KeyInfo[]> {
    const { rows } = await this.query<Parameters<typeof keyInfoOf>[0]>(SQL.keys.list);
    return rows.map(keyInfoOf);
  }

  async revokeKey(name: string): Promise<boolean> {
    return (await this.query(SQL.keys.revoke, [now(), name])).rowCount === 1;
  }

  async updateKey(name: string, changes: KeyChanges): Promise<boolean> {
    return (await this.query(SQL.keys.update, keyUpdateValues(name, changes))).rowCount === 1;
  }

  async rotateKey(name: string, keyHash: string, graceUntil: string): Promise<boolean> {
    return (await this.query(SQL.keys.rotate, [graceUntil, keyHash, name])).rowCount === 1;
  }

  async undoRotation(name: string, keyHash: string): Promise<boolean> {
    return (await this.query(SQL.keys.unrotate, [name, keyHash])).rowCount === 1;
  }

  async findKey(keyHash: string, at: string): Promise<KeyMatch | null> {
    const current = (await this.query<KeyMatch>(SQL.keys.find, [at, keyHash])).rows[0];
    return current ?? (await this.query<KeyMatch>(SQL.keys.findReplaced, [at, at, keyHash])).rows[0] ?? null;
  }

  async countRequest(keyName: string, quotas: Partial<Record<RateUnit, number>>): Promise<RateCount> {
    const counter = (this.counter ??= this.openCounter());
    const query = async (text: string, values: unknown[]) =>
      (await guard(() => counter.query<Record<string, unknown>>(text, values))).rows[0];
    return rateCountOf(keyName, await query(RATE.count, rateCountValues(keyName, quotas)), () => query(RATE.read, [keyName]));
  }

  /**
   * The rate-limit count's own few connections, opened once a key with a policy is first counted.
   * Their commits do not wait for the log to reach the disk (synchronous_commit = off): a counted
   * request costs a commit, not a flush. The count is as exact (each upsert holds the key's row
   * until it commits); a crash of the database may lose the last counts (those of its last fraction
   * of a second), and so admit them again.
   */
  private openCounter(): pg.Pool {
    const pool = new pg.Pool({ ...this.poolOptions, max: COUNTER_CONNECTIONS, options: '-c synchronous_commit=off' });
    pool.on('error', (err) => this.logger.warn({ err }, 'a database connection was lost; it will be replaced'));
    return pool;
  }

  async ping(): Promise<void> {
    await this.query('SELECT revision FROM store_meta');
  }

  async close(): Promise<void> {
    this.signals.stopWatching();
    if (this.counter !== undefined && !this.counter.ended) await this.counter.end();
    if (!this.pool.ended) await this.pool.end();
  }
}
