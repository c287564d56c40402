import { andThen, type MaybePromise } from '../maybe-promise';

/**
 * What differs between the databases a store can live in, and nothing else. A store is the shared
 * SQL (./sql.ts) and algorithms (./migration.ts, ./publish.ts, ./core.ts) run through one of these,
 * plus the mechanics only its database has (connections, its import's bulk path): see
 * src/store/README.md for what a new dialect implements and which suite proves it.
 */
export interface Dialect {
  /** A shared statement's text, written with `$1, $2, …`, as this database takes placeholders. */
  placeholders(sql: string): string;
  /** The DDL pieces the shared schema (./sql.ts) is written with. */
  readonly ddl: {
    /** A 64-bit integer column. */
    readonly integer: string;
    /** A 64-bit integer key that numbers itself. */
    readonly serial: string;
    /** An expression for sixteen random hexadecimal digits (the store's id). */
    readonly randomId: string;
    /** A true/false column (with its CHECK, where the type itself does not hold only those). */
    boolean(column: string): string;
    /** What follows a table's closing parenthesis. */
    readonly tableOptions: string;
  };
  /** How a date-time rule is spelled (./date-time-sql.ts). */
  readonly dateTime: DateTimeSpelling;
  /**
   * The database's clock, in whole seconds since the epoch, the same value wherever a statement
   * uses it: what decides the windows of every instance's rate limits.
   */
  readonly clock: string;
  /**
   * An event's place in the feed, in a query of order_events: `tx`, the text of its transaction's
   * part (SQLite's one writer has none: '0'), and `order`, the columns the feed is ordered by.
   */
  readonly eventPlace: { readonly tx: string; readonly order: string };
  /** Turns an error meaning "the database cannot serve now" into StoreUnavailableError; others as they are. */
  translate(err: unknown): unknown;
  /** `table.column` of the unique constraint an error says was violated; undefined for any other error. */
  uniqueViolation(err: unknown): string | undefined;
}

/** The pieces of a date-time rule that each database spells its own way. */
export interface DateTimeSpelling {
  /** True when `expr` matches `pattern` whole: literals, `[…]` classes and `*`, as SQLite's GLOB. */
  glob(expr: string, pattern: string): string;
  /** True when `expr`, one character, is one of these code points. */
  oneOf(expr: string, codes: readonly number[]): string;
  /** True when `expr`, ten characters `YYYY-MM-DD` of digits, names a real calendar day (leap years included, year 0000 too). */
  realDay(expr: string): string;
  /** An integer from `expr`, a text of one or more digits. */
  integer(expr: string): string;
  /**
   * The clause that decides the usual forms at once, `YYYY-MM-DDTHH:MM:SSZ` and with milliseconds:
   * `when` takes such a string, and `then` is its verdict. A string `when` leaves goes on to the
   * rule's other clauses, which judge every form, so `when` may leave more than it must; whatever it
   * takes, `then` must judge exactly. usualFormsByGlob (./date-time-sql.ts) spells it with the pieces above.
   */
  usualForms(expr: string): { readonly when: string; readonly then: string };
}

/** A statement as the shared code writes it: `$1, $2, …` placeholders, and their values. */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** A statement without values. */
export function statement(text: string, values: readonly unknown[] = []): Statement {
  return { text, values };
}

/** A row, column by column. */
export type Row = Record<string, unknown>;

/** What the shared algorithms' statements run on: a connection, or a pool's next free one. */
export interface Queryable {
  /** Runs a statement; answers nothing. */
  run(statement: Statement): MaybePromise<void>;
  /** Runs a statement; answers its rows. */
  rows(statement: Statement): MaybePromise<Row[]>;
  /**
   * Runs `writes` in order, then `read` (when given), as one step: answers `read`'s rows. A
   * database where a statement costs a round trip runs them as one statement (PostgreSQL's
   * data-modifying WITH); without this, they run one by one.
   */
  fused?(writes: readonly Statement[], read: Statement | undefined): MaybePromise<Row[] | undefined>;
}

/** A queryable that answers at once (better-sqlite3), so that what it drives can be synchronous too. */
export interface SyncQueryable extends Queryable {
  run(statement: Statement): void;
  rows(statement: Statement): Row[];
  fused?: undefined;
}

/** A queryable whose every statement runs through `through` (a store's guard), at once when it answers at once. */
export function queryableThrough(on: SyncQueryable, through: <T>(operation: () => T) => T): SyncQueryable;
export function queryableThrough(on: Queryable, through: <T>(operation: () => MaybePromise<T>) => MaybePromise<T>): Queryable;
export function queryableThrough(on: Queryable, through: <T>(operation: () => MaybePromise<T>) => MaybePromise<T>): Queryable {
  const fused = on.fused?.bind(on);
  return {
    run: (s) => through(() => on.run(s)),
    rows: (s) => through(() => on.rows(s)),
    ...(fused === undefined ? {} : { fused: (writes, then) => through(() => fused(writes, then)) }),
  };
}

/** One connection, as the shared algorithms drive it. */
export interface Connection extends Queryable {
  /**
   * Runs `body` in one write transaction that no other process's such transaction overlaps (SQLite's
   * immediate transaction; PostgreSQL's advisory lock `lock`, held to the commit), committed when
   * it returns and rolled back when it throws.
   */
  exclusively<T>(lock: bigint, body: () => MaybePromise<T>): MaybePromise<T>;
}

/** A connection that answers at once (better-sqlite3), so that what it drives can be synchronous too. */
export interface SyncConnection extends Connection, SyncQueryable {
  run(statement: Statement): void;
  rows(statement: Statement): Row[];
  fused?: undefined;
  exclusively<T>(lock: bigint, body: () => T): T;
}

/**
 * One step a shared algorithm asks its connection to take: `rows` answers the rows, `run` nothing;
 * `writes` runs its statements in order and then answers `then`'s rows, if it is given (Queryable.fused).
 */
export type Step =
  { readonly rows: Statement } | { readonly run: Statement } | { readonly writes: readonly Statement[]; readonly then?: Statement };

/** The shared algorithms are generators of steps, so that one algorithm serves every connection. */
export type Steps<T> = Generator<Step, T, Row[] | undefined>;

/**
 * Runs a shared algorithm's steps on a connection, handing each step's answer back: synchronously
 * on a synchronous connection, and on any other as far as it can before the first promise. The
 * one driver of every step generator (migrations, the import's publish) on every dialect.
 */
export function drive<T>(steps: Steps<T>, connection: SyncQueryable): T;
export function drive<T>(steps: Steps<T>, connection: Queryable): MaybePromise<T>;
export function drive<T>(steps: Steps<T>, connection: Queryable): MaybePromise<T> {
  const go = (answer: Row[] | undefined): MaybePromise<T> => {
    let next = steps.next(answer);
    while (!next.done) {
      const taken = take(next.value, connection);
      if (taken instanceof Promise) return andThen(taken, go);
      next = steps.next(taken);
    }
    return next.value;
  };
  return go(undefined);
}

/** One step on a connection: its answer, at once when the connection answers at once. */
function take(step: Step, connection: Queryable): MaybePromise<Row[] | undefined> {
  if ('rows' in step) return connection.rows(step.rows);
  if ('run' in step) return andThen(connection.run(step.run), () => undefined);
  if (connection.fused !== undefined) return connection.fused(step.writes, step.then);
  const { writes, then } = step;
  const from = (left: readonly Statement[]): MaybePromise<Row[] | undefined> => {
    for (const [i, write] of left.entries()) {
      const ran = connection.run(write);
      if (ran instanceof Promise) return ran.then(() => from(left.slice(i + 1)));
    }
    return then === undefined ? undefined : connection.rows(then);
  };
  return from(writes);
}
