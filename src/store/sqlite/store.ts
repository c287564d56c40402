import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { EventsExpiredError, StoreBusyError, StoreUnavailableError } from '../errors';
import type {
  CancelOutcome,
  ImportRecords,
  KeyChanges,
  KeyInfo,
  KeyMatch,
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
import { errorMessage } from '../../thrown';
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
  rowToRecord,
  shipOutcome,
  timestamp as now,
} from '../core';
import { EventSignals, INSERT_EVENT_SQL, MOVE_EVENTS, eventRowToRecord, pruneInBatches, type EventRow } from '../events';
import { BEFORE_FIRST_ID, PLACEMENT_SQL, rateCountValues, rateSql, type ListedRow, type OrderRow } from '../sql';
import { guard, sqliteDialect, sqlitePlaceholders, storeClosed } from './dialect';
import { importThroughStaging } from './import';
import { migrate } from './migrations';
import { EVENTS_SQL, LIST_ALL_SQL, NEXT_PLACED_ID_SQL, PUBLISHING_SQL, SQL, listFor } from './rows';
import { GroupCommit } from './group-commit';
import { ReaderPool } from './snapshots';

/** One request to count against its key's quotas. */
interface CountRequest {
  readonly keyName: string;
  readonly quotas: Partial<Record<RateUnit, number>>;
}

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
  return new SqliteStore(db, new DatabaseFile(file), new ReaderPool(file, busyTimeoutMs), () => {
    const importer = new Database(file, { timeout: busyTimeoutMs });
    configureConnection(importer);
    return importer;
  });
}

/**
 * How often (ms) a store that someone is waiting on looks for events that other processes (the
 * CLI, another server on the same file) committed; this process's own wake its readers at once.
 */
const EVENT_POLL_MS = 25;

/** The longest pause (ms) between two attempts at the write lock while another connection holds it. */
const MAX_LOCK_PAUSE_MS = 16;

/** Below this much free space on the database's filesystem, the store reports itself not ready. */
const MIN_FREE_BYTES = 256 * 1024;

/**
 * The database file as it was opened. An open connection keeps working on a file that has been
 * removed or replaced underneath it, and every write it then makes is lost with the old inode;
 * so writes and readiness first check that the path still names the file that was opened, and
 * that the process can still read and write it.
 */
class DatabaseFile {
  private readonly identity: { dev: number; ino: number };

  constructor(readonly path: string) {
    const { dev, ino } = fs.statSync(path);
    this.identity = { dev, ino };
  }

  /** Throws StoreUnavailableError unless the path still names the opened, accessible file. */
  check(): void {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.path);
      fs.accessSync(this.path, fs.constants.R_OK | fs.constants.W_OK);
    } catch (err) {
      throw new StoreUnavailableError(`the database file cannot be used: ${errorMessage(err)}`, { cause: err });
    }
    if (stat.dev !== this.identity.dev || stat.ino !== this.identity.ino) {
      throw new StoreUnavailableError('the database file was replaced while the store had it open');
    }
  }

  /** Throws StoreUnavailableError when the file's filesystem has too little room left for writes. */
  checkRoom(): void {
    const { bavail, bsize } = fs.statfsSync(path.dirname(this.path));
    if (bavail * bsize < MIN_FREE_BYTES) {
      throw new StoreUnavailableError(`the disk holding the database has less than ${MIN_FREE_BYTES} bytes free`);
    }
  }
}

class SqliteStore implements Store {
  private readonly statements;
  /** Cancels arriving together share one transaction, and so one fsync, before any is answered. */
  private readonly cancels: GroupCommit<number, CancelOutcome>;
  /** The list's ETag and its first `limit` orders, read in one transaction. */
  private readonly firstPage: (limit: number) => { etag: string; rows: ListedRow[] };
  /** The statement of each shape of page, prepared on first use (at most 4 × 2^4 shapes). */
  private readonly pages = new Map<string, Database.Statement<unknown[], OrderRow>>();
  /** The last write that failed because the store was unavailable, until a write succeeds again. */
  private writeFailure: unknown = null;
  /** How long a write waits for another connection's lock (the connection's busy timeout). */
  private readonly busyTimeoutMs: number;
  /** Who hears of events: this process's commits at once, other processes' by a poll of the feed's head. */
  private readonly signals: EventSignals;
  /** Requests of keys with rate limits arriving together are counted in one transaction, and so one commit. */
  private readonly counts: GroupCommit<CountRequest, RateCount>;
  /**
   * Placements arriving together share one transaction, and so one fsync, before any is answered;
   * each runs in a savepoint of its own (the key's record, or the order, its event, the record and
   * the revision), so that one that fails leaves the others.
   */
  private readonly placements: GroupCommit<Placement, { outcome: PlaceOutcome } | { error: unknown }>;
  /** The API key and Idempotency-Key of each placement this process is running: a second one at once is `in_use`. */
  private readonly placing = new Set<string>();
  /** The rate-limit count's connection and statements, once a key with a policy has been counted (openCounter()). */
  private counter: { db: Database.Database; countAll: Database.Transaction<(batch: readonly CountRequest[]) => RateCount[]> } | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly file: DatabaseFile,
    private readonly readers: ReaderPool,
    /** Opens a connection of the import's own: its staging transaction spans awaits. */
    private readonly openImporter: () => Database.Database,
  ) {
    this.busyTimeoutMs = Number(db.pragma('busy_timeout', { simple: true }));
    const prepare = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sqlitePlaceholders(sql));
    this.statements = {
      meta: prepare<[], { store_id: string; revision: number }>(SQL.meta),
      list: prepare<[after: number, limit: number], ListedRow>(SQL.snapshot).raw(true),
      listAll: prepare<[after: number, limit: number], ListedRow>(LIST_ALL_SQL).raw(true),
      publishing: prepare<[], number>(PUBLISHING_SQL).pluck(),
      bump: prepare(SQL.bumpRevision),
      anyOrder: prepare<[], { one: number }>(SQL.anyOrder),
      order: prepare<[number], OrderRow>(SQL.order).raw(true),
      status: prepare<[number], { status: OrderStatus }>(SQL.status),
      cancel: prepare(SQL.cancel),
      ship: prepare(SQL.ship),
      petExists: prepare<[number], { one: number }>(SQL.petExists),
      createKey: prepare(SQL.keys.create),
      listKeys: prepare<[], Parameters<typeof keyInfoOf>[0]>(SQL.keys.list),
      revokeKey: prepare(SQL.keys.revoke),
      updateKey: prepare(SQL.keys.update),
      rotateKey: prepare(SQL.keys.rotate),
      undoRotation: prepare(SQL.keys.unrotate),
      findKey: prepare<[string, string], KeyMatch>(SQL.keys.find),
      findReplacedKey: prepare<[string, string, string], KeyMatch>(SQL.keys.findReplaced),
      touch: prepare('UPDATE store_meta SET revision = revision'),
      insertEvent: prepare<[type: string, orderId: number, status: string | null, complete: 0 | 1 | null, at: string], never>(
        INSERT_EVENT_SQL,
      ),
      events: prepare<[after: number, limit: number], EventRow>(EVENTS_SQL.read).raw(true),
      eventsPruned: prepare<[], number>(EVENTS_SQL.pruned).pluck(),
      latestEvent: prepare<[], number>(EVENTS_SQL.latest).pluck(),
      eventsHead: prepare<[], string>(EVENTS_SQL.head).pluck(),
      firstKept: prepare<[string], number>(EVENTS_SQL.firstKept).pluck(),
      pruneUpTo: prepare<[number], number | null>(EVENTS_SQL.pruneUpTo).pluck(),
      prune: prepare<[number], never>(EVENTS_SQL.prune),
      markPruned: prepare<[number], never>(EVENTS_SQL.markPruned),
      placementRecord: prepare<[keyName: string, idempotencyKey: string, since: string], { fingerprint: string; answer: string }>(
        PLACEMENT_SQL.record,
      ),
      nextPlacedId: prepare<[], number>(NEXT_PLACED_ID_SQL).pluck(),
      placeOrder: prepare(PLACEMENT_SQL.order),
      remember: prepare(PLACEMENT_SQL.remember),
      pruneIdempotencyKeys: prepare<[string], never>(PLACEMENT_SQL.prune),
    };
    const place = db.transaction((placement: Placement): PlaceOutcome => {
      const { keyName, idempotencyKey, fingerprint, order } = placement;
      const kept = this.statements.placementRecord.get(keyName, idempotencyKey, placement.keptSince);
      if (kept !== undefined) return keptOutcome(kept, fingerprint);
      const id = this.statements.nextPlacedId.get();
      if (id === undefined) throw new Error('the next order id could not be read');
      const at = now();
      this.statements.placeOrder.run(id, ...placedOrderValues(order, at, 0));
      this.statements.insertEvent.run('order.created', id, 'pending', 0, at);
      const answer = placement.answer(placedRecord(id, order));
      this.statements.remember.run(keyName, idempotencyKey, fingerprint, id, answer, at);
      this.statements.bump.run();
      return { outcome: 'placed', answer };
    });
    const placeAll = db.transaction((batch: readonly Placement[]) =>
      batch.map((placement): { outcome: PlaceOutcome } | { error: unknown } => {
        try {
          return { outcome: place(placement) };
        } catch (error) {
          return { error };
        }
      }),
    );
    this.placements = new GroupCommit(async (batch, since) => {
      const results = await this.writeWhenFree(() => placeAll.immediate(batch), since);
      const placed = results.filter((result) => 'outcome' in result && result.outcome.outcome === 'placed').length;
      if (placed > 0) this.signals.committed({ 'order.created': placed });
      return results;
    });
    this.firstPage = db.transaction((limit: number) => ({
      etag: etagOf(this.statements.meta.get()),
      rows: listFor(this.statements).all(BEFORE_FIRST_ID, limit),
    }));
    const cancelAll = db.transaction((ids: readonly number[]): CancelOutcome[] => {
      const at = now();
      const { type, status } = MOVE_EVENTS.cancelled;
      const outcomes = ids.map((id): CancelOutcome => {
        if (this.statements.cancel.run(at, id).changes !== 1) return cancelOutcome(false, this.statements.status.get(id)?.status);
        this.statements.insertEvent.run(type, id, status, null, at);
        return cancelOutcome(true, 'cancelled');
      });
      if (outcomes.includes('cancelled')) this.statements.bump.run();
      return outcomes;
    });
    this.counts = new GroupCommit((requests, since) => this.countBatch(requests, since));
    this.cancels = new GroupCommit(async (ids, since) => {
      const outcomes = await this.writeWhenFree(() => cancelAll.immediate(ids), since);
      const cancelled = outcomes.filter((outcome) => outcome === 'cancelled').length;
      if (cancelled > 0) this.signals.committed({ [MOVE_EVENTS.cancelled.type]: cancelled });
      return outcomes;
    });
    this.signals = new EventSignals((changed) => {
      let head = this.statements.eventsHead.get();
      const poll = setInterval(() => {
        try {
          const now = this.guard(() => this.statements.eventsHead.get());
          if (now !== head) changed();
          head = now;
        } catch {
          // A store that cannot be read now is read again at the next poll; its readers see the error.
        }
      }, EVENT_POLL_MS);
      poll.unref();
      return () => clearInterval(poll);
    });
  }

  /**
   * Runs a store operation: on a store that is still open (else StoreUnavailableError, before the
   * driver is asked), with an unreachable store turned into StoreUnavailableError.
   */
  private guard<T>(operation: () => T): T {
    if (!this.db.open) throw storeClosed();
    return guard(operation);
  }

  /**
   * Runs a write: only on the file that was opened, with an unreachable store turned into
   * StoreUnavailableError, and remembered until a later write succeeds, so that readiness
   * reports a store that cannot write.
   */
  private write<T>(operation: () => T, { retried = false } = {}): T {
    try {
      const result = this.guard(() => {
        this.file.check();
        return operation();
      });
      this.writeFailure = null;
      return result;
    } catch (err) {
      // A lock that will be asked for again is not a failure yet.
      if (err instanceof StoreUnavailableError && !(retried && err instanceof StoreBusyError)) this.writeFailure = err;
      throw err;
    }
  }

  /**
   * Runs a write that takes the write lock, for up to the busy timeout (counted from `since`)
   * while another connection (an import, another instance) holds it. better-sqlite3 waits for a
   * lock by sleeping in the calling thread, which would hold every other request of this server
   * with it; so the lock is asked for without waiting, and asked again after a pause that lets
   * the event loop run, until it is free or the time is up (then StoreBusyError, a 503).
   */
  private writeWhenFree<T>(operation: () => T, since = performance.now()): Promise<T> {
    return this.whenFree((retried) => this.write(() => this.withoutBusyWait(operation), { retried }), since);
  }

  /**
   * Takes `attempt` (which must fail at once with StoreBusyError while another connection holds
   * the lock it needs) again and again, after pauses that let the event loop run, until it
   * succeeds or the busy timeout, counted from `since`, is up. `attempt` is told whether it will
   * be retried.
   */
  private async whenFree<T>(attempt: (retried: boolean) => T, since: number): Promise<T> {
    const deadline = since + this.busyTimeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_LOCK_PAUSE_MS)) {
      const left = deadline - performance.now();
      try {
        return attempt(left > 0);
      } catch (err) {
        if (!(err instanceof StoreBusyError) || left <= 0) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }

  /** Runs an operation that fails at once, instead of waiting, when another connection holds a lock it needs. */
  private withoutBusyWait<T>(operation: () => T): T {
    // A pragma takes effect when it is prepared, so it cannot be prepared once and run again.
    this.db.pragma('busy_timeout = 0');
    try {
      return operation();
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  async snapshotOrders(prefetch = 1000): Promise<OrderSnapshot> {
    // Most lists fit in one page: read it, with its ETag, in one read transaction on this
    // connection, and take a reader connection only for a list longer than that, which reads on
    // after that page when nothing changed the list in between.
    const first = this.guard(() => this.firstPage(prefetch + 1));
    return prefetched(first.etag, first.rows, prefetch) ?? this.readers.open(first);
  }

  getOrder(id: number): OrderRecord | undefined {
    return this.guard(() => {
      const row = this.statements.order.get(id);
      return row === undefined ? undefined : rowToRecord(row);
    });
  }

  async pageOrders(request: PageRequest): Promise<OrderRecord[]> {
    return this.guard(() => {
      const { text, values } = SQL.page(request);
      let statement = this.pages.get(text);
      if (statement === undefined) {
        statement = this.db.prepare<unknown[], OrderRow>(sqlitePlaceholders(text)).raw(true);
        this.pages.set(text, statement);
      }
      return statement.all(...values).map(rowToRecord);
    });
  }

  async cursorSecret(): Promise<Buffer> {
    return cursorSecretOf(async (sql, value) =>
      value === undefined
        ? this.guard(() => this.db.prepare<[], string | null>(sql).pluck().get())
        : void this.write(() => this.db.prepare(sqlitePlaceholders(sql)).run(value)),
    );
  }

  async listEtag(): Promise<string> {
    return this.guard(() => etagOf(this.statements.meta.get()));
  }

  async hasOrders(): Promise<boolean> {
    return this.guard(() => this.statements.anyOrder.get() !== undefined);
  }

  cancelOrder(id: number): CancelOutcome | Promise<CancelOutcome> {
    return this.guard(() => {
      // An order that is not pending cannot become pending again, so reading its status outside a
      // transaction answers 404 and 409 without taking the write lock. Only a pending order goes on
      // to the conditional update, which settles any race with another cancel or a ship.
      const before = this.statements.status.get(id)?.status;
      if (before !== 'pending') return cancelOutcome(false, before);
      return this.cancels.submit(id);
    });
  }

  async shipOrder(id: number): Promise<ShipOutcome> {
    const { type, status } = MOVE_EVENTS.shipped;
    const outcome = await this.writeWhenFree(() =>
      this.db
        .transaction((): ShipOutcome => {
          const at = now();
          if (this.statements.ship.run(at, id).changes !== 1) return shipOutcome(false, this.statements.status.get(id)?.status);
          this.statements.insertEvent.run(type, id, status, 1, at);
          this.statements.bump.run();
          return shipOutcome(true, 'shipped');
        })
        .immediate(),
    );
    if (outcome === 'shipped') this.signals.committed({ [type]: 1 });
    return outcome;
  }

  async placeOrder(placement: Placement): Promise<PlaceOutcome> {
    // A key whose record is kept is answered from it at once, with no write: a retry costs a read.
    const kept = this.guard(() => this.statements.placementRecord.get(placement.keyName, placement.idempotencyKey, placement.keptSince));
    if (kept !== undefined) return keptOutcome(kept, placement.fingerprint);
    // Only one placement of a key runs in this process at a time. Another process's holds the write
    // lock until it commits; this one's transaction then finds its record and answers it.
    const slot = JSON.stringify([placement.keyName, placement.idempotencyKey]);
    if (this.placing.has(slot)) return { outcome: 'in_use' };
    this.placing.add(slot);
    try {
      const result = await this.placements.submit(placement);
      if ('error' in result) throw result.error;
      return result.outcome;
    } finally {
      this.placing.delete(slot);
    }
  }

  async pruneIdempotencyKeys(before: string): Promise<number> {
    return pruneInBatches(() => this.writeWhenFree(() => this.statements.pruneIdempotencyKeys.run(before).changes));
  }

  readEvents(after: EventPosition | 'oldest', limit: number): EventPage {
    return this.guard(() =>
      // One read transaction: the prune's mark and the events are of the same moment.
      this.db.transaction((): EventPage => {
        const pruned = this.statements.eventsPruned.get() ?? 0;
        if (after !== 'oldest' && after.seq < pruned) throw new EventsExpiredError(`events after ${after.seq} were removed`);
        const from = after === 'oldest' ? pruned : after.seq;
        const events = this.statements.events.all(from, limit).map(eventRowToRecord);
        return { events, next: events.at(-1)?.position ?? { tx: '0', seq: from } };
      })(),
    );
  }

  latestEventPosition(): EventPosition {
    return this.guard(() => ({ tx: '0', seq: this.statements.latestEvent.get() ?? 0 }));
  }

  watchEvents(listener: () => void): () => void {
    return this.signals.watch(listener);
  }

  onEventsWritten(listener: (counts: EventCounts) => void): () => void {
    return this.signals.onWritten(listener);
  }

  async pruneEvents(before: string): Promise<number> {
    const batch = this.db.transaction((): number => {
      const upTo = this.statements.pruneUpTo.get(this.statements.firstKept.get(before) ?? Number.MAX_SAFE_INTEGER) ?? null;
      if (upTo === null) return 0;
      const { changes } = this.statements.prune.run(upTo);
      this.statements.markPruned.run(upTo);
      return changes;
    });
    // A batch per write transaction, so that a cancel never waits long for the lock.
    return pruneInBatches(() => this.writeWhenFree(() => batch.immediate()));
  }

  async importOrders(records: ImportRecords): Promise<number> {
    // The staging transaction stays open while the records stream in, so it must not share the
    // connection that serves cancels and lists in the meantime.
    const importer = this.write(() => this.openImporter());
    try {
      const imported = await importThroughStaging(importer, records, now());
      this.writeFailure = null;
      if (imported > 0) this.signals.committed({ 'order.created': imported });
      return imported;
    } catch (err) {
      if (err instanceof StoreUnavailableError) this.writeFailure = err;
      throw err;
    } finally {
      importer.close();
    }
  }

  async petExists(petId: number): Promise<boolean> {
    return this.guard(() => this.statements.petExists.get(petId) !== undefined);
  }

  async createKey(name: string, keyHash: string, key: NewKey = {}): Promise<void> {
    this.write(() => {
      try {
        this.statements.createKey.run(...newKeyValues(name, keyHash, now(), key));
      } catch (err) {
        throw keyCreationError(err, name, sqliteDialect);
      }
    });
  }

  async listKeys(): Promise<KeyInfo[]> {
    return this.guard(() => this.statements.listKeys.all().map(keyInfoOf));
  }

  async revokeKey(name: string): Promise<boolean> {
    return this.write(() => this.statements.revokeKey.run(now(), name).changes === 1);
  }

  async updateKey(name: string, changes: KeyChanges): Promise<boolean> {
    return this.write(() => this.statements.updateKey.run(...keyUpdateValues(name, changes)).changes === 1);
  }

  async rotateKey(name: string, keyHash: string, graceUntil: string): Promise<boolean> {
    return this.write(() => this.statements.rotateKey.run(graceUntil, keyHash, name).changes === 1);
  }

  async undoRotation(name: string, keyHash: string): Promise<boolean> {
    return this.write(() => this.statements.undoRotation.run(name, keyHash).changes === 1);
  }

  findKey(keyHash: string, at: string): KeyMatch | null {
    return this.guard(() => this.statements.findKey.get(at, keyHash) ?? this.statements.findReplacedKey.get(at, at, keyHash) ?? null);
  }

  async ping(): Promise<void> {
    this.guard(() => {
      this.file.check();
      this.file.checkRoom();
      this.statements.meta.get();
    });
    // After a failed write, ready again only once a write succeeds: a no-op update, which needs
    // the write lock and room for a log frame, and does not wait for another writer's lock.
    if (this.writeFailure !== null) {
      this.write(() => this.withoutBusyWait(() => this.db.transaction(() => this.statements.touch.run()).immediate()));
    }
  }

  countRequest(keyName: string, quotas: Partial<Record<RateUnit, number>>): Promise<RateCount> {
    return this.counts.submit({ keyName, quotas });
  }

  /**
   * Counts a batch of requests in one transaction of the counting connection: each request's
   * statement checks and counts in turn, so the batch is as exact as one statement each. The
   * transaction's COMMIT runs the log's automatic checkpoint (a write statement's own commit would
   * not when better-sqlite3's get() ends it by a reset, and the log would grow without bound).
   */
  private countBatch(requests: readonly CountRequest[], since: number): Promise<RateCount[]> {
    const { countAll } = this.counter ?? this.openCounter();
    return this.whenFree(() => this.guard(() => countAll.immediate(requests)), since);
  }

  /**
   * The rate-limit count's own connection, opened on first use. Its commits are not synced to disk
   * (synchronous = NORMAL, in WAL mode): a counted batch costs a write to the log, not an fsync. A
   * crash of the process loses nothing; a power cut may lose the last counts, and so admit up to a
   * window's quota again. It never waits for a lock by sleeping (busy_timeout = 0): a batch asks
   * again after a pause that lets the event loop run (whenFree).
   */
  private openCounter(): NonNullable<SqliteStore['counter']> {
    const db = new Database(this.file.path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 0');
    const sql = rateSql(sqliteDialect.clock);
    const count = db.prepare<unknown[], Record<string, unknown>>(sqlitePlaceholders(sql.count));
    const read = db.prepare<[string], Record<string, unknown>>(sqlitePlaceholders(sql.read));
    const countOne = ({ keyName, quotas }: CountRequest): RateCount =>
      rateCountOf(keyName, count.get(...rateCountValues(keyName, quotas)), () => read.get(keyName));
    this.counter = { db, countAll: db.transaction((batch: readonly CountRequest[]) => batch.map(countOne)) };
    return this.counter;
  }

  async close(): Promise<void> {
    this.signals.stopWatching();
    this.readers.close();
    if (this.counter?.db.open) this.counter.db.close();
    if (this.db.open) this.db.close();
  }
}
