import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type {
  CancelOutcome,
  ImportRecords,
  KeyMatch,
  OrderEventType,
  OrderRecord,
  OrderSnapshot,
  OrderStatus,
  PageRequest,
  PlaceOutcome,
  Placement,
  RateCount,
  ShipOutcome,
  Store,
} from '../types';
import type { RateUnit } from '../../rate-policy';
import { etagOf, prefetched, rowToRecord, timestamp as now } from '../core';
import { drive, queryableThrough, type Row, type Statement, type SyncConnection, type SyncQueryable } from '../dialect';
import { pruneInBatches } from '../events';
import { findKeySteps } from '../keys';
import { cancelOutcome, moveSteps, shipOutcome, MOVE_EVENTS, type Moved, type MoveTo } from '../moves';
import { keptSteps, placementSteps, nextIdSql, PLACEMENT_SQL } from '../placement';
import { SharedStore, sharedOperations } from '../shared-operations';
import { BEFORE_FIRST_ID, type ListedRow, type OrderRow } from '../sql';
import { Counter } from './counter';
import { UnsyncedBatches } from './unsynced';
import { sqliteConnection, sqliteDialect, sqlitePlaceholders } from './dialect';
import { SqliteFeed } from './feed';
import { importThroughStaging } from './import';
import { migrate } from './migrations';
import { LIST_ALL_SQL, PUBLISHING_SQL, SQL, listFor } from './rows';
import { GroupCommit } from './group-commit';
import { ReaderPool } from './snapshots';
import { withoutBusyWait, Writer } from './writer';

/** Options for the SQLite store. */
export interface SqliteStoreOptions {
  /** How long a write waits for another writer's lock before the store reports itself unavailable. */
  busyTimeoutMs?: number;
  /**
   * The most list snapshots read at once that keep their connections for the next ones: a
   * server's admission limit (default KEPT_IDLE). See ReaderPool, in ./snapshots.ts.
   */
  readers?: number;
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
  return new SqliteStore(new Writer(db, file), new ReaderPool(file, busyTimeoutMs, options.readers), () => {
    const importer = new Database(file, { timeout: busyTimeoutMs });
    configureConnection(importer);
    return importer;
  });
}

/**
 * The id a placement gives its order is also above the span of an import being published, whose
 * orders are not all in the table yet, so that no import's order can take it.
 */
const NEXT_ID_SQL = nextIdSql(['SELECT max(to_id) FROM import_publishing']);

/** One step of webhook bookkeeping: its writes, then the statement whose rows it answers, if any. */
interface BookkeepingStep {
  readonly writes: readonly Statement[];
  readonly then: Statement | undefined;
}

class SqliteStore extends SharedStore implements Store {
  private readonly statements;
  /** The shared statements on the writer connection, each through the store's guard (reads) or its write checks (writes). */
  private readonly read: SyncQueryable;
  /** The writer connection, as the shared algorithms drive it. */
  private readonly connection: SyncConnection;
  /**
   * The writer connection as the key check drives it: the requests of one turn that bring the same
   * key share the rows its statement read in the turn's read transaction (Writer.keptIn).
   */
  private readonly keyConnection: SyncConnection;
  protected readonly shared;
  /** Moves arriving together share one transaction, and so one fsync, before any is answered. */
  private readonly moves: GroupCommit<{ to: MoveTo; id: number }, Moved>;
  /** The list's ETag and its first `limit` orders, read in one transaction. */
  private readonly firstPage: (limit: number) => { etag: string; rows: ListedRow[] };
  /** The statement of each shape of page, prepared on first use (at most 4 × 2^4 shapes). */
  private readonly pages = new Map<string, Database.Statement<unknown[], OrderRow>>();
  /** The change feed: its reads, its prune, and who hears of events. */
  protected readonly feed: SqliteFeed;
  /**
   * Placements arriving together share one transaction, and so one fsync, before any is answered;
   * each runs in a savepoint of its own, so that one that fails or places nothing leaves the others.
   */
  private readonly placements: GroupCommit<Placement, { outcome: PlaceOutcome } | { error: unknown }>;
  /**
   * The claims of placements running in this process: a second placement of one key at once is
   * `in_use`. Another process's placement holds the write lock until it commits, and this one's
   * transaction then finds its record.
   */
  private readonly placing = new Set<string>();
  /** The rate-limit count: its own connection, a batch per commit. */
  private readonly counter: Counter;
  /** Webhook delivery's bookkeeping: its own connection, unsynced, a batch per commit. */
  private readonly bookkeeping: UnsyncedBatches<BookkeepingStep, { rows: Row[] } | { error: unknown }>;

  constructor(
    private readonly writer: Writer,
    private readonly readers: ReaderPool,
    /** Opens a connection of the import's own: its staging transaction spans awaits. */
    private readonly openImporter: () => Database.Database,
  ) {
    super();
    const { db } = writer;
    const connection = (this.connection = sqliteConnection(db));
    const keyRows = writer.keptIn<Row[]>();
    this.keyConnection = {
      ...connection,
      rows: (statement) => keyRows(statement.text, statement.values, () => connection.rows(statement)),
    };
    this.feed = new SqliteFeed(writer);
    this.read = queryableThrough(connection, (operation) => writer.read(operation));
    // Webhook delivery's bookkeeping (its log, cursors, retries and failures): the writes of one
    // turn of the event loop in one unsynced transaction, however many endpoints wrote; each keeps
    // its own outcome. A power cut may lose the last of them, and at least once still holds: a
    // cursor moves only after the outcome it follows, and a lost move sends its events again.
    // Each entry is writes and then, if given, a statement whose rows it answers: one step of the
    // shared operations (run, rows, or the two fused).
    const bookkeeping = new UnsyncedBatches(writer, (steps: readonly BookkeepingStep[], on) =>
      steps.map(({ writes, then }): { rows: Row[] } | { error: unknown } => {
        try {
          for (const write of writes) on.run(write);
          return { rows: then === undefined ? [] : on.rows(then) };
        } catch (err) {
          return { error: err };
        }
      }),
    );
    this.bookkeeping = bookkeeping;
    const bookkept = async (writes: readonly Statement[], then: Statement | undefined): Promise<Row[]> => {
      const outcome = await bookkeeping.submit({ writes, then });
      if ('error' in outcome) throw outcome.error;
      return outcome.rows;
    };
    this.shared = sharedOperations(SQL, sqliteDialect, {
      read: this.read,
      write: queryableThrough(connection, (op) => writer.write(op)),
      bookkeeping: {
        run: async (one) => void (await bookkept([one], undefined)),
        rows: (one) => bookkept([], one),
        fused: (writes, then) => bookkept(writes, then),
      },
    });
    const prepare = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sqlitePlaceholders(sql));
    this.statements = {
      meta: prepare<[], { store_id: string; revision: number }>(SQL.meta),
      list: prepare<[after: number, limit: number], ListedRow>(SQL.snapshot).raw(true),
      listAll: prepare<[after: number, limit: number], ListedRow>(LIST_ALL_SQL).raw(true),
      publishing: prepare<[], number>(PUBLISHING_SQL).pluck(),
      order: prepare<[number], OrderRow>(SQL.order).raw(true),
      status: prepare<[number], { status: OrderStatus }>(SQL.status),
      touch: prepare('UPDATE store_meta SET revision = revision'),
      pruneIdempotencyKeys: prepare<[string], never>(PLACEMENT_SQL.prune),
    };
    /** Thrown to roll back a placement's savepoint that placed nothing, carrying what it found. */
    class PlacedNothing extends Error {
      constructor(readonly outcome: PlaceOutcome) {
        super(`a placement placed nothing: ${outcome.outcome}`);
      }
    }
    const place = db.transaction((placement: Placement): PlaceOutcome => {
      const outcome = drive(placementSteps(placement, now(), { nextId: NEXT_ID_SQL }), connection);
      if (outcome.outcome !== 'placed') throw new PlacedNothing(outcome);
      return outcome;
    });
    const placeAll = db.transaction((batch: readonly Placement[]) =>
      batch.map((placement): { outcome: PlaceOutcome } | { error: unknown } => {
        try {
          return { outcome: place(placement) };
        } catch (error) {
          return error instanceof PlacedNothing ? { outcome: error.outcome } : { error };
        }
      }),
    );
    this.placements = new GroupCommit(async (batch, since) => {
      const results = await writer.whenFree(() => placeAll.immediate(batch), since);
      const placed = results.filter((result) => 'outcome' in result && result.outcome.outcome === 'placed').length;
      if (placed > 0) this.feed.committed({ 'order.created': placed });
      return results;
    });
    this.firstPage = db.transaction((limit: number) => ({
      etag: etagOf(this.statements.meta.get()),
      rows: listFor(this.statements).all(BEFORE_FIRST_ID, limit),
    }));
    const moveAll = db.transaction((batch: readonly { to: MoveTo; id: number }[]) => {
      const at = now();
      return batch.map(({ to, id }) => ({ to, ...drive(moveSteps(SQL, to, id, at), connection) }));
    });
    this.moves = new GroupCommit(async (batch, since): Promise<Moved[]> => {
      const moved = await writer.whenFree(() => moveAll.immediate(batch), since);
      const counts: Partial<Record<OrderEventType, number>> = {};
      for (const { to, moved: yes } of moved) if (yes) counts[MOVE_EVENTS[to].type] = (counts[MOVE_EVENTS[to].type] ?? 0) + 1;
      if (Object.keys(counts).length > 0) this.feed.committed(counts);
      return moved;
    });
    this.counter = new Counter(writer);
  }

  override findKey(keyHash: string, at: string): KeyMatch | null {
    // Every keyed request asks: its steps run as one read, on the connection itself, and the
    // requests of one turn that bring the same key share what it read.
    return this.writer.read(() => drive(findKeySteps(keyHash, at), this.keyConnection));
  }

  async snapshotOrders(prefetch = 1000): Promise<OrderSnapshot> {
    // Most lists fit in one page: read it, with its ETag, in one read transaction on this
    // connection, and take a reader connection only for a list longer than that, which reads on
    // after that page when nothing changed the list in between.
    const first = this.writer.read(() => this.firstPage(prefetch + 1));
    return prefetched(first.etag, first.rows, prefetch) ?? this.readers.open(first);
  }

  getOrder(id: number): OrderRecord | undefined {
    return this.writer.read(() => {
      const row = this.statements.order.get(id);
      return row === undefined ? undefined : rowToRecord(row);
    });
  }

  async pageOrders(request: PageRequest): Promise<OrderRecord[]> {
    return this.writer.read(() => {
      const { text, values } = SQL.page(request);
      let statement = this.pages.get(text);
      if (statement === undefined) {
        statement = this.writer.db.prepare<unknown[], OrderRow>(sqlitePlaceholders(text)).raw(true);
        this.pages.set(text, statement);
      }
      return statement.all(...values).map(rowToRecord);
    });
  }

  cancelOrder(id: number): CancelOutcome | Promise<CancelOutcome> {
    // An order that is not pending cannot become pending again, so reading its status outside a
    // transaction answers 404 and 409 without the write lock; only a pending order goes on to the move.
    const before = this.writer.read(() => this.statements.status.get(id)?.status);
    if (before !== 'pending') return cancelOutcome({ moved: false, status: before ?? null });
    return this.moves.submit({ to: 'cancelled', id }).then(cancelOutcome);
  }

  async shipOrder(id: number): Promise<ShipOutcome> {
    return shipOutcome(await this.moves.submit({ to: 'shipped', id }));
  }

  async placeOrder(placement: Placement): Promise<PlaceOutcome> {
    // A key whose record is kept is answered from it at once, with no write: a retry costs a read.
    const kept = drive(keptSteps(placement), this.read);
    if (kept !== undefined) return kept;
    const claim = JSON.stringify([placement.keyName, placement.idempotencyKey]);
    if (this.placing.has(claim)) return { outcome: 'in_use' };
    this.placing.add(claim);
    try {
      const result = await this.placements.submit(placement);
      if ('error' in result) throw result.error;
      return result.outcome;
    } finally {
      this.placing.delete(claim);
    }
  }

  async pruneIdempotencyKeys(before: string): Promise<number> {
    return pruneInBatches(() => this.writer.whenFree(() => this.statements.pruneIdempotencyKeys.run(before).changes));
  }

  async importOrders(records: ImportRecords): Promise<number> {
    // The staging transaction stays open while the records stream in, so it must not share the
    // connection that serves cancels and lists in the meantime.
    const importer = this.writer.write(() => this.openImporter());
    try {
      const imported = await importThroughStaging(importer, records, now());
      this.writer.succeeded();
      this.writer.endReads();
      if (imported > 0) this.feed.committed({ 'order.created': imported });
      return imported;
    } catch (err) {
      this.writer.noteFailure(err);
      throw err;
    } finally {
      importer.close();
    }
  }

  async ping(): Promise<void> {
    this.writer.guard(() => {
      this.writer.checkFile();
      this.statements.meta.get();
    });
    // After a failed write, ready again only once a write succeeds: a no-op update, which needs
    // the write lock and room for a log frame, and does not wait for another writer's lock.
    if (this.writer.failed) {
      const { db, busyTimeoutMs } = this.writer;
      this.writer.write(() => withoutBusyWait(db, busyTimeoutMs, () => db.transaction(() => this.statements.touch.run()).immediate()));
    }
  }

  countRequest(keyName: string, quotas: Partial<Record<RateUnit, number>>): Promise<RateCount> {
    return this.counter.count(keyName, quotas);
  }

  override readTogether<T>(run: () => T): T {
    return this.writer.readTogether(run);
  }

  override toldOfCommit(): void {
    this.writer.endReads();
    super.toldOfCommit();
  }

  async close(): Promise<void> {
    this.writer.endReads();
    this.feed.stopWatching();
    this.readers.close();
    this.counter.close();
    this.bookkeeping.close();
    this.writer.close();
  }
}
