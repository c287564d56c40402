import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { StoreBusyError, StoreUnavailableError } from '../errors';
import { errorMessage } from '../../thrown';
import { guard, storeClosed } from './dialect';
import { TurnReads } from './turn-reads';

/** The longest pause (ms) between two attempts at the write lock while another connection holds it. */
const MAX_LOCK_PAUSE_MS = 16;

/** Below this much free space on the database's filesystem, the store reports itself not ready. */
const MIN_FREE_BYTES = 256 * 1024;

/**
 * The SQLite store's one writer connection, and how every write runs on it: only on the file that
 * was opened, never sleeping in the thread while another connection holds the write lock, and
 * remembered when it fails until a write succeeds again, so that readiness reports a store that
 * cannot write. The reads of one turn's requests share a read transaction on it (./turn-reads.ts),
 * which every write ends first.
 */
export class Writer {
  /** The last write that failed because the store was unavailable, until a write succeeds again. */
  private failure: unknown = null;
  /** How long a write waits for another connection's lock (the connection's busy timeout). */
  readonly busyTimeoutMs: number;
  private readonly file: DatabaseFile;
  /** The read transaction that the reads of one turn's requests share. */
  private readonly turn: TurnReads;
  /**
   * Whether close() has closed the connection: every operation asks, and this is the store's own
   * answer, where the driver's `open` is a call into its native code.
   */
  private closed = false;

  constructor(
    readonly db: Database.Database,
    file: string,
  ) {
    this.busyTimeoutMs = Number(db.pragma('busy_timeout', { simple: true }));
    this.file = new DatabaseFile(file);
    this.turn = new TurnReads(db);
  }

  /** Whether a write has failed since the last that succeeded. */
  get failed(): boolean {
    return this.failure !== null;
  }

  /**
   * Runs a store operation: on a store that is still open (else StoreUnavailableError, before the
   * driver is asked), with an unreachable store turned into StoreUnavailableError.
   */
  guard<T>(operation: () => T): T {
    if (this.closed) throw storeClosed();
    return guard(operation);
  }

  /** Runs a read, in the turn's read transaction where there is one (TurnReads). */
  read<T>(operation: () => T): T {
    return this.guard(() => this.turn.read(operation));
  }

  /** A read whose answer the turn's read transaction keeps, by statement and values, until it ends (TurnReads.keptIn); run it inside read(). */
  keptIn<T extends object>(): (text: string, values: readonly unknown[], read: () => T) => T {
    return this.turn.keptIn<T>();
  }

  /** Runs `run` as a request's dispatch: its reads may share the turn's read transaction (TurnReads). */
  readTogether<T>(run: () => T): T {
    return this.turn.together(run);
  }

  /** Ends the turn's read transaction: this process committed on another connection, or heard of a commit. */
  endReads(): void {
    this.turn.end();
  }

  /** Ends the turn's read transaction and closes the connection: every later operation is refused (storeClosed). */
  close(): void {
    if (this.closed) return;
    this.turn.end();
    this.closed = true;
    this.db.close();
  }

  /** Runs a write on the opened file, remembering a failure until a later write succeeds. */
  write<T>(operation: () => T, { retried = false } = {}): T {
    // Never in an older snapshot: a write there could not commit (SQLITE_BUSY_SNAPSHOT).
    this.turn.end();
    try {
      const result = this.guard(() => {
        this.file.check();
        return operation();
      });
      this.failure = null;
      return result;
    } catch (err) {
      this.noteFailure(err, retried);
      throw err;
    }
  }

  /** Remembers a failure of a write that ran elsewhere (the import's own connection). */
  noteFailure(err: unknown, retried = false): void {
    // A lock that will be asked for again is not a failure yet.
    if (err instanceof StoreUnavailableError && !(retried && err instanceof StoreBusyError)) this.failure = err;
  }

  /** A write that ran elsewhere succeeded. */
  succeeded(): void {
    this.failure = null;
  }

  /**
   * Runs a write that takes the write lock, for up to the busy timeout (counted from `since`)
   * while another connection (an import, another instance) holds it. better-sqlite3 waits for a
   * lock by sleeping in the calling thread, which would hold every other request of this server
   * with it; so the lock is asked for without waiting, and asked again after a pause that lets
   * the event loop run, until it is free or the time is up (then StoreBusyError, a 503).
   */
  whenFree<T>(operation: () => T, since = performance.now()): Promise<T> {
    return retryWhileBusy(
      (retried) => this.write(() => withoutBusyWait(this.db, this.busyTimeoutMs, operation), { retried }),
      since,
      this.busyTimeoutMs,
    );
  }

  /** Throws StoreUnavailableError unless the file is the opened one, accessible, with room left. */
  checkFile(): void {
    this.file.check();
    this.file.checkRoom();
  }
}

/**
 * Takes `attempt` (which must fail at once with StoreBusyError while another connection holds
 * the lock it needs) again and again, after pauses that let the event loop run, until it
 * succeeds or `timeoutMs`, counted from `since`, is up. `attempt` is told whether it will be retried.
 */
export async function retryWhileBusy<T>(attempt: (retried: boolean) => T, since: number, timeoutMs: number): Promise<T> {
  const deadline = since + timeoutMs;
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
export function withoutBusyWait<T>(db: Database.Database, busyTimeoutMs: number, operation: () => T): T {
  // A pragma takes effect when it is prepared, so it cannot be prepared once and run again.
  db.pragma('busy_timeout = 0');
  try {
    return operation();
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}

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
