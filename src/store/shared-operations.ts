import type { MaybePromise } from '../maybe-promise';
import { cursorSecretOf, etagOf, textOrNull, timestamp } from './core';
import { drive, statement, type Dialect, type Queryable, type Row, type Statement, type Steps, type SyncQueryable } from './dialect';
import { StoreInvariantError } from './errors';
import { findKeySteps, KEY_SQL, keyCreationError, keyInfoOf, keyUpdateValues, newKeyValues } from './keys';
import type { StoreSql } from './sql';
import { attemptOf, createEndpointStatement, endpointOf, retryOf, updateEndpointStatement, webhookSql } from './webhooks';
import type { StoreFeed } from './events';
import type {
  AttemptRecord,
  EventCounts,
  EventLog,
  EventPage,
  EventPosition,
  KeyChanges,
  KeyInfo,
  KeyMatch,
  NewKey,
  Store,
  WebhookStore,
} from './types';

/** The operations every store answers with the same statements, whatever its mechanics. */
export type SharedOperations = Pick<
  Store,
  | 'createKey'
  | 'updateKey'
  | 'rotateKey'
  | 'undoRotation'
  | 'listKeys'
  | 'revokeKey'
  | 'findKey'
  | 'listEtag'
  | 'hasOrders'
  | 'petExists'
  | 'cursorSecret'
  | 'webhooks'
>;

/**
 * The shared operations over a store's two ways to its database: `read`, which answers at once on
 * a store that answers in-process (SQLite), so that a request's key check takes no turn of the event
 * loop; and `write`, through which a store keeps its writes' own checks (SQLite's: the opened file
 * still there, and readiness told of a failed write). Each turns its driver's errors into the store's.
 */
export function sharedOperations(
  sql: StoreSql,
  dialect: Dialect,
  ways: {
    readonly read: SyncQueryable | Queryable;
    readonly write: Queryable;
    /**
     * Where webhook delivery's bookkeeping (its log, its cursor, its retries and failures: a few
     * writes per event and endpoint) is written: a store whose every commit costs an fsync (SQLite)
     * runs the writes of one turn of the event loop in one transaction that is not synced; by
     * default, `write`.
     */
    readonly bookkeeping?: Queryable;
  },
): SharedOperations {
  const { read, write } = ways;
  /** Whether a write changed one row: each such statement returns the row it changed. */
  const changedOne = (text: string, values: readonly unknown[]) => changedOneRow(write, `${text} RETURNING 1 AS one`, values);
  return {
    findKey: (keyHash, at) => drive(findKeySteps(keyHash, at), read),
    async createKey(name, keyHash, key) {
      try {
        await write.run(statement(KEY_SQL.create, newKeyValues(name, keyHash, timestamp(), key)));
      } catch (err) {
        throw keyCreationError(err, name, dialect);
      }
    },
    listKeys: async () => (await rows(read, KEY_SQL.list)).map(keyInfoOf),
    revokeKey: (name) => changedOne(KEY_SQL.revoke, [timestamp(), name]),
    updateKey: (name, changes) => changedOne(KEY_SQL.update, keyUpdateValues(name, changes)),
    rotateKey: (name, keyHash, graceUntil) => changedOne(KEY_SQL.rotate, [graceUntil, keyHash, name]),
    undoRotation: (name, keyHash) => changedOne(KEY_SQL.unrotate, [name, keyHash]),
    listEtag: async () => etagOf(metaOf(firstOf(await rows(read, sql.meta)))),
    hasOrders: async () => (await rows(read, sql.anyOrder)).length > 0,
    petExists: async (petId) => (await rows(read, sql.petExists, [petId])).length > 0,
    webhooks: webhookOperations(dialect, ways),
    cursorSecret: () =>
      cursorSecretOf(async (text, value) =>
        value === undefined
          ? textOrNull(firstOf(await rows(read, text))?.cursor_secret, 'store_meta')
          : void (await write.run(statement(text, [value]))),
      ),
  };
}

/** A statement's rows on `on`. */
function rows(on: Queryable, text: string, values: readonly unknown[] = []): MaybePromise<Row[]> {
  return on.rows(statement(text, values));
}

/** Whether a write that returns the rows it changed changed exactly one. */
async function changedOneRow(on: Queryable, text: string, values: readonly unknown[]): Promise<boolean> {
  return (await rows(on, text, values)).length === 1;
}

/** The webhook operations over a store's queryables: each one statement, so none holds a transaction open. */
function webhookOperations(
  dialect: Dialect,
  {
    read,
    write,
    bookkeeping = write,
  }: { readonly read: SyncQueryable | Queryable; readonly write: Queryable; readonly bookkeeping?: Queryable | undefined },
): WebhookStore {
  const sql = webhookSql(dialect);
  const endpoint = (row: Row | undefined) => (row === undefined ? null : endpointOf(row, timestamp()));
  /** The values of sql.advance: endpoint `id`'s cursor from `from` to `to`, while `owner` holds it. */
  const advanceValues = (id: string, owner: string, from: EventPosition, to: EventPosition): unknown[] => [
    to.tx,
    to.seq,
    id,
    owner,
    from.tx,
    from.seq,
  ];
  const logStatement = (id: string, attempt: AttemptRecord): Statement =>
    statement(sql.log, [
      id,
      attempt.eventId,
      attempt.attempt,
      attempt.at,
      attempt.status,
      attempt.error,
      attempt.durationMs,
      attempt.outcome,
    ]);
  return {
    async createEndpoint(made) {
      await write.run(createEndpointStatement(sql, made));
      const [row] = await rows(read, sql.get, [made.id]);
      if (row === undefined) throw new StoreInvariantError(`webhook endpoint ${made.id} was not there once made`);
      return endpointOf(row, timestamp());
    },
    getEndpoint: async (id) => endpoint(firstOf(await rows(read, sql.get, [id]))),
    listEndpoints: async (after, limit) => (await rows(read, sql.page, [after, limit])).map((row) => endpointOf(row, timestamp())),
    updateEndpoint: async (id, changes) => {
      const { text, values } = updateEndpointStatement(sql, id, changes);
      return endpoint(firstOf(await rows(write, text, values)));
    },
    async removeEndpoint(id) {
      const removed = await changedOneRow(write, sql.remove, [id]);
      await write.run(statement(sql.removeRetries, [id]));
      await write.run(statement(sql.removeAttempts, [id]));
      return removed;
    },
    rotateEndpointSecret: async (id, secret, previousUntil) =>
      endpoint(firstOf(await rows(write, sql.rotate, [previousUntil, secret, id]))),
    claimEndpoints: async (owner, limit, leaseSeconds) =>
      (await rows(write, sql.claim, [owner, leaseSeconds, owner, limit, owner])).map((row) => endpointOf(row, timestamp())),
    renewLease: async (id, owner, leaseSeconds) => {
      const [row] = await rows(write, sql.renew, [leaseSeconds, id, owner]);
      return row === undefined ? null : Number(row.secondsLeft);
    },
    releaseLease: async (id, owner) => write.run(statement(sql.release, [id, owner])),
    advanceCursor: (id, owner, from, to) => changedOneRow(bookkeeping, sql.advance, advanceValues(id, owner, from, to)),
    noteFailure: async (id, owner, at) => {
      const [row] = await rows(bookkeeping, sql.failing, [at, at, id, owner]);
      return row === undefined ? false : typeof row.failingSince === 'string' ? row.failingSince : null;
    },
    disableEndpoint: (id, owner, reason) => changedOneRow(write, sql.disable, [reason, id, owner]),
    scheduleRetry: (id, owner, retry) =>
      changedOneRow(bookkeeping, sql.retry, [id, retry.eventId, retry.body, retry.attempts, retry.nextAt, id, owner]),
    dropRetry: (id, owner, eventId) => changedOneRow(bookkeeping, sql.retried, [id, eventId, id, owner]),
    dueRetries: async (id, now, limit) => (await rows(read, sql.due, [id, now, limit])).map(retryOf),
    nextRetryAt: async (id) => {
      const next = firstOf(await rows(read, sql.nextDue, [id]))?.nextAt;
      return typeof next === 'string' ? next : null;
    },
    async replaySince(id, since) {
      // The cursor is moved only from where it was read: a worker that moved it meanwhile is read again.
      for (let tries = 0; tries < 10; tries += 1) {
        const current = endpoint(firstOf(await rows(write, sql.get, [id])));
        if (current === null) return null;
        const types = current.eventTypes;
        const counts = await rows(read, sql.countSince, [since]);
        const events = counts
          .filter(({ type }) => types === null || types.some((wanted) => wanted === type))
          .reduce((sum, { events: count }) => sum + Number(count), 0);
        const [first] = await rows(read, sql.firstSince, [since]);
        if (first === undefined) return events;
        const from = { tx: String(first.tx), seq: Number(first.seq) - 1 };
        if (!isBefore(from, current.cursor)) return events;
        if (await changedOneRow(write, sql.rewind, [from.tx, from.seq, id, current.cursor.tx, current.cursor.seq])) return events;
      }
      throw new StoreInvariantError(`the cursor of webhook endpoint ${id} kept moving while it was replayed`);
    },
    disabledEndpoints: async () => Number(firstOf(await rows(read, sql.disabledCount, []))?.disabled ?? 0),
    logAttempt: async (id, attempt) => bookkeeping.run(logStatement(id, attempt)),
    logAndAdvance: async (id, owner, attempt, from, to) =>
      drive(loggedAndAdvanced(logStatement(id, attempt), statement(sql.advance, advanceValues(id, owner, from, to))), bookkeeping),
    attempts: async (id, before, limit) => (await rows(read, sql.attempts, [id, before ?? Number.MAX_SAFE_INTEGER, limit])).map(attemptOf),
  };
}

/** A log line, then a move of a cursor, as one step (a fused statement where one costs a round trip): whether the cursor moved. */
function* loggedAndAdvanced(log: Statement, advance: Statement): Steps<boolean> {
  return ((yield { writes: [log], then: advance }) ?? []).length === 1;
}

/** Whether feed position `a` comes before `b`: by transaction (PostgreSQL's xid; SQLite's is always 0), then by seq. */
function isBefore(a: EventPosition, b: EventPosition): boolean {
  const [ta, tb] = [BigInt(a.tx), BigInt(b.tx)];
  return ta === tb ? a.seq < b.seq : ta < tb;
}

/** The first row, if any. */
const firstOf = <R>(rows: readonly R[]): R | undefined => rows[0];

/** store_meta's row as etagOf takes it; undefined when there is none (etagOf says so). */
function metaOf(row: Row | undefined): { store_id: string; revision: number } | undefined {
  if (row === undefined) return undefined;
  const { store_id, revision } = row;
  if (typeof store_id !== 'string' || typeof revision !== 'number') throw new StoreInvariantError('store_meta has no store id or revision');
  return { store_id, revision };
}

/**
 * What every store answers the same way: the shared operations, and its change feed's. A store
 * extends it with its own feed and the shared operations over its queryables, and overrides what
 * it answers its own way.
 */
export abstract class SharedStore implements SharedOperations, EventLog {
  protected abstract readonly shared: SharedOperations;
  protected abstract readonly feed: StoreFeed;

  createKey(name: string, keyHash: string, key: NewKey): Promise<void> {
    return this.shared.createKey(name, keyHash, key);
  }
  updateKey(name: string, changes: KeyChanges): Promise<boolean> {
    return this.shared.updateKey(name, changes);
  }
  rotateKey(name: string, keyHash: string, graceUntil: string): Promise<boolean> {
    return this.shared.rotateKey(name, keyHash, graceUntil);
  }
  undoRotation(name: string, keyHash: string): Promise<boolean> {
    return this.shared.undoRotation(name, keyHash);
  }
  listKeys(): Promise<KeyInfo[]> {
    return this.shared.listKeys();
  }
  revokeKey(name: string): Promise<boolean> {
    return this.shared.revokeKey(name);
  }
  findKey(keyHash: string, at: string): MaybePromise<KeyMatch | null> {
    return this.shared.findKey(keyHash, at);
  }
  listEtag(): Promise<string> {
    return this.shared.listEtag();
  }
  hasOrders(): Promise<boolean> {
    return this.shared.hasOrders();
  }
  petExists(petId: number): Promise<boolean> {
    return this.shared.petExists(petId);
  }
  cursorSecret(): Promise<Buffer> {
    return this.shared.cursorSecret();
  }
  get webhooks(): WebhookStore {
    return this.shared.webhooks;
  }
  readEvents(after: EventPosition | 'oldest', limit: number): MaybePromise<EventPage> {
    return this.feed.readEvents(after, limit);
  }
  latestEventPosition(): MaybePromise<EventPosition> {
    return this.feed.latestEventPosition();
  }
  watchEvents(listener: () => void): () => void {
    return this.feed.watchEvents(listener);
  }
  toldOfCommit(): void {
    this.feed.toldOfCommit();
  }
  get announcesAs(): string | undefined {
    return this.feed.announcesAs;
  }
  /** Runs `run`: a store whose reads gain nothing from sharing a turn's transaction (PostgreSQL batches them instead). */
  readTogether<T>(run: () => T): T {
    return run();
  }
  onEventsWritten(listener: (counts: EventCounts) => void): () => void {
    return this.feed.onEventsWritten(listener);
  }
  pruneEvents(before: string): Promise<number> {
    return this.feed.pruneEvents(before);
  }
}
