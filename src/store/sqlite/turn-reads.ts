import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';

/** How many times the event loop has polled for I/O: libuv counts one just before each poll. */
const polls = (): number => performance.nodeTiming.uvMetricsInfo.loopCount;

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
 *   the request has arrived, and the step runner around the steps of a request let on after a wait
 *   (a commit of the rate-limit count, admission's turn), which had arrived before it. A read
 *   elsewhere (a timer, the delivery worker) never begins one: it has nothing to share it with.
 * - **Ended** at the end of the turn (the check phase, right after the requests were read); before
 *   any write on the connection, which must never run in an older snapshot; and when this process
 *   commits on another connection or hears of a commit, so that what it wrote or was told of is read.
 * - **Never joined after the next poll for I/O**: a request read by that poll may have arrived after
 *   the transaction began. The server begins one while reading requests, but a pipelined request
 *   held back by a full socket is let through later, from where its socket drained (the check
 *   phase), and the end of a turn begun there comes only after the next poll; so a read first checks
 *   that the loop has not polled since the transaction began, and else ends it and begins afresh.
 */
export class TurnReads {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement;
  readonly #commit: Database.Statement;
  /** How deep inside `together` the running code is. */
  #inside = 0;
  #open = false;
  /** The loop's poll count when the open transaction began. */
  #began = 0;
  /** What keptIn() kept in the open transaction, each map emptied when it ends. */
  readonly #kept: Array<Map<string, Map<string, object>>> = [];

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
    if (this.#open && polls() !== this.#began) this.end();
    if (!this.#open && this.#inside > 0 && !this.#db.inTransaction) {
      this.#begin.run();
      this.#open = true;
      this.#began = polls();
      setImmediate(() => this.end());
    }
    return operation();
  }

  /**
   * A read whose answer the turn's transaction keeps: asked again with the same statement `text`
   * and `values` in the same transaction, it answers what it answered first, without asking the
   * database. One snapshot answers the same statement the same way, so this answers exactly what
   * the database would; the next transaction asks afresh. Outside a turn's transaction every call
   * reads. It holds at most one answer per read made in the transaction, and is emptied when the
   * transaction ends. Answers are kept by statement, then by values: a statement's text is one
   * string for the process, hashed once, where a key joining it to the values would be a new
   * string of hundreds of characters to hash at every request.
   */
  keptIn<T extends object>(): (text: string, values: readonly unknown[], read: () => T) => T {
    const kept = new Map<string, Map<string, T>>();
    this.#kept.push(kept);
    return (text, values, read) => {
      if (!this.#open) return read();
      let byValues = kept.get(text);
      if (byValues === undefined) kept.set(text, (byValues = new Map<string, T>()));
      const key = values.join('\u0000');
      const known = byValues.get(key);
      if (known !== undefined) return known;
      const answer = read();
      byValues.set(key, answer);
      return answer;
    };
  }

  /** Ends the turn's transaction, if one is open: the next read sees every commit made before it. */
  end(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const kept of this.#kept) for (const byValues of kept.values()) byValues.clear();
    // A closed connection is in no transaction.
    if (this.#db.inTransaction) this.#commit.run();
  }
}
