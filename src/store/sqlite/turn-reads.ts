import type Database from 'better-sqlite3';

/**
 * The reads of the requests that one turn of the event loop answers, in one read transaction on
 * the writer connection.
 *
 * Each statement outside a transaction is a read transaction of its own, and each takes and
 * releases SQLite's read lock: system calls that a one-order read pays twice (the key, the order),
 * and that a VM makes dear. The requests a turn answers had all arrived when its first read was
 * made, so they may share what that read saw: a commit made after it is theirs to miss, as it would
 * be had it come a moment later; the next request to arrive reads afresh in a later turn. So a key
 * revoked by another process is refused from the next request on, as it always was.
 *
 * - **Begun only inside `together`**, which the server runs around each request's dispatch, where
 *   the request has arrived. A read elsewhere (a timer, the delivery worker) never begins one: a
 *   transaction it began could outlast the wait for the next requests, and be older than they are.
 * - **Ended** at the end of the turn (the check phase, right after the requests were read); before
 *   any write on the connection, which must never run in an older snapshot; and when this process
 *   commits on another connection or hears of a commit, so that what it wrote or was told of is read.
 */
export class TurnReads {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  /** How deep inside `together` the running code is. */
  #inside = 0;
  #open = false;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#begin = db.prepare('BEGIN');
    this.#commit = db.prepare('COMMIT');
  }

  /** Runs `run`, whose reads may begin the turn's transaction (and, until the turn ends, share it). */
  together<T>(run: () => T): T {
    this.#inside += 1;
    try {
      return run();
    } finally {
      this.#inside -= 1;
    }
  }

  /** Runs one read: in the turn's transaction when one is open, or may begin now. */
  read<T>(operation: () => T): T {
    if (!this.#open && this.#inside > 0 && !this.#db.inTransaction) {
      this.#begin.run();
      this.#open = true;
      setImmediate(() => this.end());
    }
    return operation();
  }

  /** Ends the turn's transaction, if one is open: the next read sees every commit made before it. */
  end(): void {
    if (!this.#open) return;
    this.#open = false;
    if (this.#db.open && this.#db.inTransaction) this.#commit.run();
  }
}
